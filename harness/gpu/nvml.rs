//! A few NVML queries (clocks, driver version, throttle reasons, power), loaded by hand: cudarc 0.19 has no
//! NVML binding, and a missing libnvidia-ml must only cost us the clock readings, never the run.

use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr, CString};

type Device = *mut c_void;

pub struct Nvml {
    lib: Library,
    device: Device,
}

// NVML handles are plain tokens, usable from any thread.
unsafe impl Send for Nvml {}
unsafe impl Sync for Nvml {}

const NVML_CLOCK_SM: c_uint = 1;
const NVML_CLOCK_MEM: c_uint = 2;

impl Nvml {
    /// Opens NVML and finds the device with this PCI bus id (as cuDeviceGetPCIBusId writes it).
    pub fn open(pci_bus_id: &str) -> Option<Nvml> {
        let lib = ["libnvidia-ml.so.1", "libnvidia-ml.so"]
            .iter()
            .find_map(|n| unsafe { Library::new(n) }.ok())?;
        unsafe {
            let init: Symbol<unsafe extern "C" fn() -> c_int> = lib.get(b"nvmlInit_v2\0").ok()?;
            if init() != 0 {
                return None;
            }
            let by_bus: Symbol<unsafe extern "C" fn(*const c_char, *mut Device) -> c_int> =
                lib.get(b"nvmlDeviceGetHandleByPciBusId_v2\0").ok()?;
            let bus = CString::new(pci_bus_id).ok()?;
            let mut device: Device = std::ptr::null_mut();
            if by_bus(bus.as_ptr(), &mut device) != 0 {
                return None;
            }
            Some(Nvml { lib, device })
        }
    }

    fn clock(&self, which: c_uint, query: &[u8]) -> Option<u32> {
        unsafe {
            let f: Symbol<unsafe extern "C" fn(Device, c_uint, *mut c_uint) -> c_int> =
                self.lib.get(query).ok()?;
            let mut mhz: c_uint = 0;
            (f(self.device, which, &mut mhz) == 0).then_some(mhz)
        }
    }

    /// Current SM clock in MHz.
    pub fn sm_clock_mhz(&self) -> Option<u32> {
        self.clock(NVML_CLOCK_SM, b"nvmlDeviceGetClockInfo\0")
    }
    pub fn mem_clock_mhz(&self) -> Option<u32> {
        self.clock(NVML_CLOCK_MEM, b"nvmlDeviceGetClockInfo\0")
    }
    pub fn max_sm_clock_mhz(&self) -> Option<u32> {
        self.clock(NVML_CLOCK_SM, b"nvmlDeviceGetMaxClockInfo\0")
    }

    /// Bitmask of the reasons the clocks are held down now (power cap = 0x4, thermal = 0x20/0x40, ...).
    pub fn throttle_reasons(&self) -> Option<u64> {
        unsafe {
            let f: Symbol<unsafe extern "C" fn(Device, *mut c_ulonglong) -> c_int> = self
                .lib
                .get(b"nvmlDeviceGetCurrentClocksEventReasons\0")
                .or_else(|_| self.lib.get(b"nvmlDeviceGetCurrentClocksThrottleReasons\0"))
                .ok()?;
            let mut r: c_ulonglong = 0;
            (f(self.device, &mut r) == 0).then_some(r)
        }
    }

    /// Power drawn now, in milliwatts (NVML's average over its last sampling period).
    pub fn power_mw(&self) -> Option<u32> {
        unsafe {
            let f: Symbol<unsafe extern "C" fn(Device, *mut c_uint) -> c_int> =
                self.lib.get(b"nvmlDeviceGetPowerUsage\0").ok()?;
            let mut mw: c_uint = 0;
            (f(self.device, &mut mw) == 0).then_some(mw)
        }
    }

    /// Energy drawn since the driver was loaded, in millijoules: differences give energy per launch.
    pub fn energy_mj(&self) -> Option<u64> {
        unsafe {
            let f: Symbol<unsafe extern "C" fn(Device, *mut c_ulonglong) -> c_int> = self
                .lib
                .get(b"nvmlDeviceGetTotalEnergyConsumption\0")
                .ok()?;
            let mut mj: c_ulonglong = 0;
            (f(self.device, &mut mj) == 0).then_some(mj)
        }
    }

    pub fn driver_version(&self) -> Option<String> {
        unsafe {
            let f: Symbol<unsafe extern "C" fn(*mut c_char, c_uint) -> c_int> =
                self.lib.get(b"nvmlSystemGetDriverVersion\0").ok()?;
            let mut buf = [0 as c_char; 96];
            if f(buf.as_mut_ptr(), buf.len() as c_uint) != 0 {
                return None;
            }
            Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
        }
    }
}

/// Names of the throttle-reason bits that matter for timing.
pub fn describe_throttle(mask: u64) -> Vec<&'static str> {
    let names = [
        (0x1, "gpu idle"),
        (0x2, "application clocks setting"),
        (0x4, "software power cap"),
        (0x8, "hardware slowdown"),
        (0x20, "software thermal slowdown"),
        (0x40, "hardware thermal slowdown"),
        (0x80, "hardware power brake"),
    ];
    names
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, n)| *n)
        .collect()
}
