//! The order a persistent kernel takes its tiles in under `tile_order=hilbert`: a Hilbert curve over the tile
//! grid, computed here once per shape and written into the kernel's module (`tile_order_table` in
//! kernels/gemm.cu). Consecutive tiles, and so the tiles one wave of clusters holds at a time, stay close in both
//! directions, so they share A row panels and B column panels in L2 (fast.cu's kernel 10 to 11).

use crate::error::{config_err, Result};

/// Entries `tile_order_table` holds (kernels/gemm.cu declares it with this size).
pub const TABLE_CAPACITY: usize = 65536;

/// Position of cell (x, y) along the Hilbert curve that fills a `side` x `side` square (`side` a power of two).
fn hilbert_index(side: u32, mut x: u32, mut y: u32) -> u64 {
    let mut d = 0u64;
    let mut s = side / 2;
    while s > 0 {
        let rx = u32::from(x & s != 0);
        let ry = u32::from(y & s != 0);
        d += u64::from(s) * u64::from(s) * u64::from((3 * rx) ^ ry);
        // Turn the quadrant so the curve inside it starts where the previous one ended.
        if ry == 0 {
            if rx == 1 {
                x = side - 1 - x;
                y = side - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d
}

/// Whether the kernel's table holds a `rows` x `cols` tile grid (each coordinate in 16 bits).
pub fn check_fits(rows: u32, cols: u32) -> Result<()> {
    if rows as usize * cols as usize > TABLE_CAPACITY || rows > 0xFFFF || cols > 0xFFFF {
        return config_err(format!(
            "tile_order=hilbert: {rows} x {cols} tiles, more than the {TABLE_CAPACITY} the kernel's table holds"
        ));
    }
    Ok(())
}

/// Every tile of a `rows` x `cols` grid once, as `tm | tn << 16`, in the order of the Hilbert curve of the
/// smallest power-of-two square holding the grid (cells outside the grid are skipped; on a square power-of-two
/// grid, each tile is a neighbour of the one before it).
pub fn hilbert(rows: u32, cols: u32) -> Result<Vec<u32>> {
    check_fits(rows, cols)?;
    let side = rows.max(cols).max(1).next_power_of_two();
    let mut cells: Vec<(u64, u32)> = (0..rows)
        .flat_map(|tm| (0..cols).map(move |tn| (tm, tn)))
        .map(|(tm, tn)| (hilbert_index(side, tn, tm), tm | tn << 16))
        .collect();
    cells.sort_unstable_by_key(|&(d, _)| d);
    Ok(cells.into_iter().map(|(_, v)| v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coords(v: u32) -> (i64, i64) {
        (i64::from(v & 0xFFFF), i64::from(v >> 16))
    }

    #[test]
    fn every_tile_once() {
        for (rows, cols) in [(1, 1), (16, 16), (32, 112), (3, 7), (1, 40)] {
            let mut t = hilbert(rows, cols).unwrap();
            assert_eq!(t.len(), (rows * cols) as usize);
            t.sort_unstable();
            t.dedup();
            assert_eq!(t.len(), (rows * cols) as usize, "{rows} x {cols}");
            assert!(t.iter().all(|&v| (v & 0xFFFF) < rows && (v >> 16) < cols));
        }
    }

    #[test]
    fn on_a_power_of_two_square_each_tile_neighbours_the_last() {
        let t = hilbert(16, 16).unwrap();
        assert_eq!(coords(t[0]), (0, 0));
        for w in t.windows(2) {
            let ((a, b), (c, d)) = (coords(w[0]), coords(w[1]));
            assert_eq!(
                (a - c).abs() + (b - d).abs(),
                1,
                "{:?} -> {:?}",
                (a, b),
                (c, d)
            );
        }
    }

    #[test]
    fn a_wave_of_66_tiles_stays_compact() {
        // 4096^3 on 66 clusters of 256x256: each wave's tiles span at most 12 tile rows or columns (computed
        // before measuring: 8-12 by 8-10, where the grouped raster of 8 spans 8 by 9, 12 by 9 across a group).
        let t = hilbert(16, 16).unwrap();
        for wave in t.chunks(66) {
            let rows: std::collections::BTreeSet<_> = wave.iter().map(|&v| v & 0xFFFF).collect();
            let cols: std::collections::BTreeSet<_> = wave.iter().map(|&v| v >> 16).collect();
            assert!(
                rows.len() <= 12 && cols.len() <= 12,
                "{} x {}",
                rows.len(),
                cols.len()
            );
        }
    }

    #[test]
    fn too_many_tiles_is_refused() {
        assert!(hilbert(300, 300).unwrap_err().to_string().contains("65536"));
    }
}
