//! What a macOS executable is, read from its Mach-O header and load commands: the release's
//! darwin builds cannot be run on this project's machines, so `make release-check` checks them
//! instead: the CPU they are for, that they are signed executables, the macOS version they need,
//! and the libraries they link (only the system's own `/usr/lib` ones: no framework, no library a Mac
//! may lack).

/// One thin 64-bit Mach-O file, as far as the check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachO {
    /// `arm64` or `x86_64` (or the raw CPU type of another).
    pub arch: String,
    /// `MH_EXECUTE` with an entry point (`LC_MAIN`).
    pub executable: bool,
    /// The macOS version it needs, `major.minor.patch`, when a load command says.
    pub min_macos: Option<String>,
    /// The dynamic libraries it loads, by install name.
    pub dylibs: Vec<String>,
    /// It carries a code signature (`LC_CODE_SIGNATURE`): Apple silicon runs no unsigned arm64
    /// code, and an ad-hoc signature, which the linker makes, is enough.
    pub signed: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MachOError {
    #[error("not a 64-bit little-endian Mach-O file (magic {0:#010x})")]
    Magic(u32),
    #[error("the file ends inside its {0}")]
    Truncated(&'static str),
}

const MH_MAGIC_64: u32 = 0xfeed_facf;
const MH_EXECUTE: u32 = 2;
const CPU_TYPE_X86_64: u32 = 0x0100_0007;
const CPU_TYPE_ARM64: u32 = 0x0100_000c;
const LC_LOAD_DYLIB: u32 = 0xc;
const LC_LOAD_WEAK_DYLIB: u32 = 0x8000_0018;
const LC_REEXPORT_DYLIB: u32 = 0x8000_001f;
const LC_VERSION_MIN_MACOSX: u32 = 0x24;
const LC_BUILD_VERSION: u32 = 0x32;
const LC_MAIN: u32 = 0x8000_0028;
const LC_CODE_SIGNATURE: u32 = 0x1d;
const PLATFORM_MACOS: u32 = 1;

fn u32_at(bytes: &[u8], at: usize, what: &'static str) -> Result<u32, MachOError> {
    let field = bytes.get(at..at + 4).ok_or(MachOError::Truncated(what))?;
    Ok(u32::from_le_bytes(field.try_into().expect("four bytes")))
}

/// `xxxx.yy.zz` packed in a `u32`, as the version load commands store it.
fn version(packed: u32) -> String {
    format!("{}.{}.{}", packed >> 16, (packed >> 8) & 0xff, packed & 0xff)
}

impl MachO {
    /// Reads the header and load commands of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<MachO, MachOError> {
        let magic = u32_at(bytes, 0, "header")?;
        if magic != MH_MAGIC_64 {
            return Err(MachOError::Magic(magic));
        }
        let arch = match u32_at(bytes, 4, "header")? {
            CPU_TYPE_ARM64 => "arm64".to_string(),
            CPU_TYPE_X86_64 => "x86_64".to_string(),
            other => format!("cputype {other:#x}"),
        };
        let execute = u32_at(bytes, 12, "header")? == MH_EXECUTE;
        let count = u32_at(bytes, 16, "header")?;
        let mut macho = MachO {
            arch,
            executable: false,
            min_macos: None,
            dylibs: Vec::new(),
            signed: false,
        };
        let mut has_main = false;
        // The load commands follow the 32-byte header.
        let mut at = 32;
        for _ in 0..count {
            let cmd = u32_at(bytes, at, "load commands")?;
            let size = u32_at(bytes, at + 4, "load commands")? as usize;
            let body = bytes
                .get(at..at + size)
                .ok_or(MachOError::Truncated("load commands"))?;
            match cmd {
                LC_LOAD_DYLIB | LC_LOAD_WEAK_DYLIB | LC_REEXPORT_DYLIB => {
                    let name_at = u32_at(body, 8, "dylib command")? as usize;
                    let name = body
                        .get(name_at..)
                        .ok_or(MachOError::Truncated("dylib command"))?;
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    macho
                        .dylibs
                        .push(String::from_utf8_lossy(&name[..end]).into_owned());
                }
                LC_BUILD_VERSION if u32_at(body, 8, "build version")? == PLATFORM_MACOS => {
                    macho.min_macos = Some(version(u32_at(body, 12, "build version")?));
                }
                LC_VERSION_MIN_MACOSX => macho.min_macos = Some(version(u32_at(body, 8, "version")?)),
                LC_MAIN => has_main = true,
                LC_CODE_SIGNATURE => macho.signed = true,
                _ => {}
            }
            at += size.max(8);
        }
        macho.executable = execute && has_main;
        Ok(macho)
    }

    /// The libraries a Mac may not have: anything outside the system's own `/usr/lib`
    /// (frameworks, Homebrew's, a build machine's paths).
    pub fn foreign_dylibs(&self) -> Vec<&str> {
        (self.dylibs.iter())
            .filter(|d| !d.starts_with("/usr/lib/"))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal executable: header, LC_BUILD_VERSION (macOS 11.0), LC_MAIN and two dylibs.
    fn sample(cputype: u32, dylibs: &[&str]) -> Vec<u8> {
        let mut commands = Vec::new();
        let mut count = 0;
        let mut push = |words: &[u32], tail: &[u8]| {
            let size = (words.len() * 4 + tail.len()).div_ceil(8) * 8;
            let start = commands.len();
            for word in words {
                commands.extend(word.to_le_bytes());
            }
            commands.extend(tail);
            commands.resize(start + size, 0);
            commands[start + 4..start + 8].copy_from_slice(&(size as u32).to_le_bytes());
            count += 1;
        };
        push(&[LC_BUILD_VERSION, 0, PLATFORM_MACOS, 11 << 16, 0, 0], &[]);
        push(&[LC_MAIN, 0, 0, 0, 0, 0], &[]);
        push(&[LC_CODE_SIGNATURE, 0, 0, 0], &[]);
        for dylib in dylibs {
            let mut name = dylib.as_bytes().to_vec();
            name.push(0);
            push(&[LC_LOAD_DYLIB, 0, 24, 2, 0, 0], &name);
        }
        let mut bytes = Vec::new();
        for word in [
            MH_MAGIC_64,
            cputype,
            0,
            MH_EXECUTE,
            count,
            commands.len() as u32,
            0,
            0,
        ] {
            bytes.extend(word.to_le_bytes());
        }
        bytes.extend(commands);
        bytes
    }

    #[test]
    fn reads_the_architecture_version_and_libraries() {
        let bytes = sample(
            CPU_TYPE_ARM64,
            &["/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib"],
        );
        let macho = MachO::parse(&bytes).expect("parses");
        assert_eq!(macho.arch, "arm64");
        assert!(macho.executable);
        assert!(macho.signed);
        assert_eq!(macho.min_macos.as_deref(), Some("11.0.0"));
        assert_eq!(macho.dylibs.len(), 2);
        assert!(macho.foreign_dylibs().is_empty());
    }

    #[test]
    fn a_framework_is_foreign_and_other_files_are_refused() {
        let security = "/System/Library/Frameworks/Security.framework/Versions/A/Security";
        let macho = MachO::parse(&sample(CPU_TYPE_X86_64, &[security])).expect("parses");
        assert_eq!(macho.arch, "x86_64");
        assert_eq!(macho.foreign_dylibs(), [security]);
        assert_eq!(
            MachO::parse(b"\x7fELF\x02\x01\x01\0"),
            Err(MachOError::Magic(0x464c_457f))
        );
        assert_eq!(
            MachO::parse(&MH_MAGIC_64.to_le_bytes()),
            Err(MachOError::Truncated("header"))
        );
    }
}
