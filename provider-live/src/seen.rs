//! What one step (a refresh, a plan, an apply) saw of a present object: the view the stale-plan
//! guard holds the next step to. It travels in the resource's private state
//! ([`crate::private_state`], which also says how it is encoded).

use crate::ownership::FieldSet;

/// Bytes of the SHA-256 a view keeps: it tells "this object changed since the plan", for which
/// 128 bits are ample, and every byte is paid for in each instance of the state file.
pub const DIGEST_LEN: usize = 16;

/// A step's view of a present object: the fields our manager owned (`None`: it owned none yet,
/// an import not yet applied, and the digest covers the whole content) and the first
/// [`DIGEST_LEN`] bytes of the SHA-256 of their values.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub fields: Option<FieldSet>,
    pub digest: [u8; DIGEST_LEN],
}

impl Seen {
    /// `sha256`: the full digest of what was seen.
    pub fn new(fields: Option<FieldSet>, sha256: &[u8; 32]) -> Seen {
        Seen {
            fields,
            digest: prefix(sha256),
        }
    }

    /// Whether `sha256`, the full digest of what is there now, is what was seen.
    pub fn matches(&self, sha256: &[u8; 32]) -> bool {
        prefix(sha256) == self.digest
    }
}

/// The part of a SHA-256 a view keeps.
fn prefix(sha256: &[u8; 32]) -> [u8; DIGEST_LEN] {
    let mut kept = [0; DIGEST_LEN];
    kept.copy_from_slice(&sha256[..DIGEST_LEN]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_matches_only_the_digest_it_was_made_of() {
        let sha: [u8; 32] = std::array::from_fn(|i| i as u8);
        let seen = Seen::new(None, &sha);
        assert_eq!(seen.digest.to_vec(), (0..16).collect::<Vec<u8>>());
        assert!(seen.matches(&sha));
        let mut other = sha;
        other[3] ^= 1;
        assert!(!seen.matches(&other));
        // Past the kept prefix nothing counts.
        other = sha;
        other[20] ^= 1;
        assert!(seen.matches(&other));
    }
}
