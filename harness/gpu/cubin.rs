//! What a prebuilt cubin says about its kernels, read on the CPU: their names, their parameters' sizes and their
//! registers, so a manifest naming a cubin from Triton, the CuTe DSL or nvcc is checked before any GPU loads it
//! (harness/families/external/manifest.rs), as a PTX module's `.entry` list is.
//!
//! A cubin is an ELF file. Each kernel is a function symbol marked as an entry point (STO_CUDA_ENTRY in its
//! `st_other`), and its section `.nv.info.NAME` holds attribute records: 4 bytes (format, attribute, and a 16-bit
//! value or payload size), then, for the format EIFMT_SVAL, the payload. EIATTR_KPARAM_INFO's 12-byte payload
//! gives one parameter's ordinal (bytes 4-5) and its size (bits 18-31 of bytes 8-11). The section `.nv.info`
//! holds EIATTR_REGCOUNT and EIATTR_FRAME_SIZE records of (symbol index, value). The layout is what
//! `cuobjdump -elf` prints for Triton 3.6's and NVRTC 13.0's cubins (the tests read both). Anything else (a fatbin,
//! a damaged file) reads as None: never a panic, and no check is made on the CPU (the driver's check on loading
//! remains).

/// One kernel of a cubin.
#[derive(Clone, Debug, PartialEq)]
pub struct CubinKernel {
    pub name: String,
    /// Each parameter's size in bytes, in order (None where the records are missing or not a full list).
    pub params: Option<Vec<usize>>,
    pub registers: Option<u32>,
    /// Bytes of stack frame (local memory: spills or local arrays).
    pub frame_bytes: Option<u32>,
}

const STO_CUDA_ENTRY: u8 = 0x10;
const STT_FUNC: u8 = 2;
const EIFMT_SVAL: u8 = 0x04;
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_REGCOUNT: u8 = 0x2f;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// A NUL-terminated name at `at` in `table`.
fn name_at(table: &[u8], at: usize) -> Option<String> {
    let rest = table.get(at..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    String::from_utf8(rest[..end].to_vec()).ok()
}

struct Section<'a> {
    name: String,
    data: &'a [u8],
    link: u32,
    entry_size: u64,
}

/// The ELF's sections with their names, or None if it is not a 64-bit little-endian ELF that reads cleanly.
fn sections(b: &[u8]) -> Option<Vec<Section<'_>>> {
    if b.get(..6)? != [0x7f, b'E', b'L', b'F', 2, 1] {
        return None;
    }
    let table = usize::try_from(u64_at(b, 0x28)?).ok()?;
    let (size, count, names) = (
        u16_at(b, 0x3a)? as usize,
        u16_at(b, 0x3c)? as usize,
        u16_at(b, 0x3e)? as usize,
    );
    if size < 64 {
        return None;
    }
    let mut raw = Vec::with_capacity(count);
    for i in 0..count {
        let h = table.checked_add(i.checked_mul(size)?)?;
        let (kind, offset, len) = (u32_at(b, h + 4)?, u64_at(b, h + 24)?, u64_at(b, h + 32)?);
        let data: &[u8] = if kind == 8 {
            &[] // SHT_NOBITS: no bytes in the file
        } else {
            let start = usize::try_from(offset).ok()?;
            b.get(start..start.checked_add(usize::try_from(len).ok()?)?)?
        };
        raw.push((u32_at(b, h)?, data, u32_at(b, h + 40)?, u64_at(b, h + 56)?));
    }
    let strings = raw.get(names)?.1;
    raw.into_iter()
        .map(|(name, data, link, entry_size)| {
            Some(Section {
                name: name_at(strings, name as usize)?,
                data,
                link,
                entry_size,
            })
        })
        .collect()
}

/// The attribute records of an `.nv.info` section: (attribute, SVAL payload), or None if they do not read to its
/// end exactly.
fn records(data: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let (format, attribute, value) =
            (*data.get(at)?, *data.get(at + 1)?, u16_at(data, at + 2)?);
        at += 4;
        let payload: &[u8] = if format == EIFMT_SVAL {
            let end = at.checked_add(value as usize)?;
            let p = data.get(at..end)?;
            at = end;
            p
        } else {
            &[]
        };
        out.push((attribute, payload));
    }
    Some(out)
}

/// The kernels of the cubin `bytes`, or None where it is not a cubin this can read (a fatbin, say).
pub fn cubin_kernels(bytes: &[u8]) -> Option<Vec<CubinKernel>> {
    let sections = sections(bytes)?;
    let symtab = sections.iter().find(|s| s.name == ".symtab")?;
    if symtab.entry_size != 24 {
        return None;
    }
    let strtab = sections.get(symtab.link as usize)?.data;
    // (symbol index, name) of every entry point.
    let mut entries: Vec<(u32, String)> = Vec::new();
    for (i, sym) in symtab.data.chunks_exact(24).enumerate() {
        if sym[4] & 0xf == STT_FUNC && sym[5] & STO_CUDA_ENTRY != 0 {
            entries.push((i as u32, name_at(strtab, u32_at(sym, 0)? as usize)?));
        }
    }
    // Per-symbol values from `.nv.info`: registers and frame size.
    let global = match sections.iter().find(|s| s.name == ".nv.info") {
        Some(s) => records(s.data)?,
        None => Vec::new(),
    };
    let value_for = |attribute: u8, symbol: u32| {
        global.iter().find_map(|(a, p)| {
            (*a == attribute && p.len() == 8 && u32_at(p, 0) == Some(symbol))
                .then(|| u32_at(p, 4))
                .flatten()
        })
    };
    let mut kernels = Vec::new();
    for (symbol, name) in entries {
        let info = format!(".nv.info.{name}");
        let params = (sections.iter().find(|s| s.name == info))
            .and_then(|s| records(s.data))
            .and_then(|recs| {
                let mut by_ordinal: Vec<(u16, usize)> = Vec::new();
                for (a, p) in recs {
                    if a == EIATTR_KPARAM_INFO {
                        if p.len() < 12 {
                            return None;
                        }
                        by_ordinal.push((u16_at(p, 4)?, ((u32_at(p, 8)? >> 18) & 0x3fff) as usize));
                    }
                }
                by_ordinal.sort_unstable();
                // Ordinals 0, 1, ... n-1, each once: otherwise the list is not whole.
                (by_ordinal.iter().enumerate())
                    .all(|(i, (o, _))| *o as usize == i)
                    .then(|| by_ordinal.into_iter().map(|(_, size)| size).collect())
            });
        kernels.push(CubinKernel {
            registers: value_for(EIATTR_REGCOUNT, symbol),
            frame_bytes: value_for(EIATTR_FRAME_SIZE, symbol),
            name,
            params,
        });
    }
    Some(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRITON_FP16: &[u8] =
        include_bytes!("../../kernels/ext/triton_persistent/matmul_abt_persistent_fp16.cubin");

    #[test]
    fn a_triton_cubin_names_its_kernel_parameters_and_registers() {
        // As `cuobjdump -elf` and `cuobjdump -res-usage` (Triton 3.6.0's own) print them for this cubin.
        let kernels = cubin_kernels(TRITON_FP16).expect("an ELF cubin");
        assert_eq!(
            kernels,
            vec![CubinKernel {
                name: "matmul_abt_persistent".into(),
                params: Some(vec![8, 8, 8, 4, 4, 4, 4, 8, 8]),
                registers: Some(154),
                frame_bytes: Some(0),
            }]
        );
    }

    #[test]
    fn what_is_not_a_cubin_reads_as_none_and_damage_never_panics() {
        assert_eq!(cubin_kernels(b""), None);
        assert_eq!(cubin_kernels(b"PTX .version 8.7"), None);
        // A fatbin's header (magic 0xBA55ED50): the driver reads it, the CPU check does not.
        assert_eq!(
            cubin_kernels(&[0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0]),
            None
        );
        // Cut short anywhere: never a panic, and None wherever the section table or a section is cut (the
        // program headers after them are not read).
        let table_end = u64_at(TRITON_FP16, 0x28).unwrap() as usize
            + 64 * u16_at(TRITON_FP16, 0x3c).unwrap() as usize;
        assert!(table_end < TRITON_FP16.len());
        for len in (0..TRITON_FP16.len()).step_by(7) {
            let read = cubin_kernels(&TRITON_FP16[..len]);
            assert!(len >= table_end || read.is_none(), "{len}");
        }
        let mut rng = crate::measure::oc::Rng::new(38);
        for _ in 0..3000 {
            let mut b = TRITON_FP16.to_vec();
            for _ in 0..1 + rng.next_u64() % 8 {
                let at = (rng.next_u64() as usize) % b.len();
                b[at] = rng.next_u64() as u8;
            }
            let _ = cubin_kernels(&b);
        }
    }
}
