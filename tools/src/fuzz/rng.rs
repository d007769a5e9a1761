//! The fuzzer's randomness: SplitMix64, small and fast, written here so that a run depends
//! on nothing but its seed. Every input gets its own stream from `(seed, index)`, so any one
//! input replays alone.

/// A deterministic pseudo-random stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The stream of input `index` of a run seeded with `seed`.
    pub fn for_input(seed: u64, index: u64) -> Rng {
        let mut mixer = Rng(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
        Rng(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_index_only() {
        let draw = |seed, index| {
            let mut rng = Rng::for_input(seed, index);
            [rng.next_u64(), rng.next_u64()]
        };
        assert_eq!(draw(1, 7), draw(1, 7));
        assert_ne!(draw(1, 7), draw(1, 8));
        assert_ne!(draw(1, 7), draw(2, 7));
        let mut rng = Rng::for_input(3, 4);
        assert!((0..1000).all(|_| rng.below(5) < 5));
    }
}
