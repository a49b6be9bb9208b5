//! One error type for the whole harness: every message names the constraint or the failure it reports.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// No usable CUDA installation or GPU (library missing, driver error, no device).
    NoGpu(String),
    /// A GPU exists but is not the architecture the kernels are built for.
    WrongArch { found: String, needed: String },
    /// A kernel configuration that cannot be built or cannot run on this shape or device.
    Config(String),
    /// NVRTC rejected a variant.
    Compile { variant: String, log: String },
    /// A CUDA call failed; `context` says which step.
    Cuda { context: String, message: String },
    /// A kernel's bounded wait gave up (see diag.rs for the sentence).
    Hang(String),
    /// A trial's child process ran past its deadline and was killed.
    Timeout(String),
    /// The output did not match the reference.
    Wrong(String),
    /// Anything else worth a sentence (I/O, JSON).
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoGpu(m) => write!(f, "no usable GPU: {m}"),
            Error::WrongArch { found, needed } => {
                write!(
                    f,
                    "wrong GPU architecture: found {found}, these kernels need {needed}"
                )
            }
            Error::Config(m) => write!(f, "invalid configuration: {m}"),
            Error::Compile { variant, log } => {
                write!(f, "NVRTC failed to compile {variant}:\n{log}")
            }
            Error::Cuda { context, message } => write!(f, "CUDA error while {context}: {message}"),
            Error::Hang(m) => write!(f, "hang: {m}"),
            Error::Timeout(m) => write!(f, "timeout: {m}"),
            Error::Wrong(m) => write!(f, "wrong result: {m}"),
            Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for configuration errors.
pub fn config_err<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Config(msg.into()))
}

/// Wraps a CUDA driver, cuBLAS or NVRTC error with the step that failed.
pub trait CudaContext<T> {
    fn during(self, context: &str) -> Result<T>;
}

impl<T, E: fmt::Debug> CudaContext<T> for std::result::Result<T, E> {
    fn during(self, context: &str) -> Result<T> {
        self.map_err(|e| {
            let message = format!("{e:?}");
            if message.contains("OUT_OF_MEMORY") {
                Error::Cuda {
                    context: context.to_string(),
                    message: format!("{message} (device memory exhausted: choose a smaller shape or fewer rotation sets)"),
                }
            } else {
                Error::Cuda { context: context.to_string(), message }
            }
        })
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Other(format!("I/O error: {e}"))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Other(format!("JSON error: {e}"))
    }
}
