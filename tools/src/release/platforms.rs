//! The platforms a release is built for: where users run the engine. Each is the engine's name
//! for it and the Rust target that builds it; this machine's platform is the everyday release
//! build (`target/release`), every other one a cross build with zig as the linker
//! (`scripts/build-platforms.sh`, into `target/cross/<target>/release`).

use std::path::{Path, PathBuf};

use provider_mirror as mirror;

/// One platform: the engine's name (`darwin_arm64`) and the Rust target triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    pub name: &'static str,
    pub target: &'static str,
}

/// Every platform `make release` publishes. The Windows build uses the GNU ABI: zig links it
/// without Microsoft's SDK, and the binary needs no runtime beyond the system's own DLLs.
pub const PLATFORMS: [Platform; 5] = [
    Platform {
        name: "darwin_amd64",
        target: "x86_64-apple-darwin",
    },
    Platform {
        name: "darwin_arm64",
        target: "aarch64-apple-darwin",
    },
    Platform {
        name: "linux_amd64",
        target: "x86_64-unknown-linux-gnu",
    },
    Platform {
        name: "linux_arm64",
        target: "aarch64-unknown-linux-gnu",
    },
    Platform {
        name: "windows_amd64",
        target: "x86_64-pc-windows-gnu",
    },
];

/// Where cross builds go (`CARGO_TARGET_DIR` of `scripts/build-platforms.sh`): apart from the
/// everyday `target/`, so that a cross build never waits on its lock, nor the other way round.
pub const CROSS_DIR: &str = "cross";

impl Platform {
    /// The platform named `name`, if it is one of [`PLATFORMS`].
    pub fn named(name: &str) -> Option<Platform> {
        PLATFORMS.iter().copied().find(|p| p.name == name)
    }

    /// `.exe` on Windows.
    pub fn exe_suffix(&self) -> &'static str {
        if self.name.starts_with("windows_") {
            ".exe"
        } else {
            ""
        }
    }

    /// The folder of this platform's release binaries under the target folder `target`.
    pub fn release_dir(&self, target: &Path, host: &str) -> PathBuf {
        if self.name == host {
            target.join("release")
        } else {
            target.join(CROSS_DIR).join(self.target).join("release")
        }
    }

    /// The binary of `address` built for this platform.
    pub fn binary(&self, target: &Path, host: &str, address: &mirror::Address) -> PathBuf {
        let file = format!("{}{}", address.binary_file(), self.exe_suffix());
        self.release_dir(target, host).join(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_builds_in_place_and_the_others_cross() {
        let target = Path::new("/t");
        let live = &mirror::PROVIDERS[0];
        let linux = Platform::named("linux_amd64").expect("linux_amd64");
        assert_eq!(
            linux.binary(target, "linux_amd64", live),
            Path::new("/t/release/terraform-provider-live")
        );
        let windows = Platform::named("windows_amd64").expect("windows_amd64");
        assert_eq!(
            windows.binary(target, "linux_amd64", live),
            Path::new("/t/cross/x86_64-pc-windows-gnu/release/terraform-provider-live.exe")
        );
        assert_eq!(Platform::named("plan9_amd64"), None);
    }
}
