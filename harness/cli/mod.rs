//! The command line's commands, by where they run: on a GPU, or anywhere.

pub mod offline;
pub mod on_gpu;
