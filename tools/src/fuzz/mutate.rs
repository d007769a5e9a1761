//! Broken inputs: valid encodings mutated the ways that find decoder bugs (flipped bits,
//! markers and lengths that promise more than follows, cuts, repeats), random msgpack-shaped
//! bytes and JSON text, and duration strings for the `timeouts` parser.

use super::rng::Rng;

/// Marker bytes that change how the rest is read: nil, fix and wide collection heads,
/// strings, binaries, extensions (unknowns), floats, the one invalid marker.
const MARKERS: [u8; 20] = [
    0xc0, 0xc1, 0xc2, 0x80, 0x90, 0x92, 0xa0, 0xa5, 0xc4, 0xc7, 0xcb, 0xcf, 0xd3, 0xd4, 0xd9, 0xdb, 0xdc,
    0xdd, 0xde, 0xdf,
];

/// JSON fragments that break or stretch a document.
const JSON_TOKENS: [&str; 22] = [
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "-",
    "1e999",
    "0.5",
    "\\u",
    "\\ud800",
    "\\udc00\"",
    "{\"value\": 1, \"type\": \"number\"}",
    "{\"type\": [\"list\",\"string\"], \"value\": []}",
    "\"type\"",
    "[[[[[[[[[[[[[[[[",
    "\u{0}",
    "😀",
];

/// How many edits a mutation makes: mostly one, so that many mutants still decode and
/// what the decoder accepts gets checked too; sometimes up to four.
fn edits(rng: &mut Rng) -> usize {
    if rng.chance(60) { 1 } else { 2 + rng.below(3) }
}

/// `input` with one to four random edits.
pub fn bytes(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..edits(rng) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if at < out.len() => out[at] ^= 1 << rng.below(8),
            1 if at < out.len() => out[at] = *rng.pick(&MARKERS),
            2 => {
                let fresh: Vec<u8> = (0..1 + rng.below(4)).map(|_| rng.byte()).collect();
                out.splice(at..at, fresh);
            }
            3 => {
                let end = (at + 1 + rng.below(8)).min(out.len());
                out.drain(at..end);
            }
            4 => out.truncate(at),
            5 => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            _ => {
                // A length that claims far more than follows.
                let head = *rng.pick(&[0xc6u8, 0xdb, 0xdd, 0xdf]);
                out.splice(at..at, [head, 0xff, 0xff, 0xff, rng.byte()]);
            }
        }
    }
    out
}

/// Random bytes shaped like msgpack: markers, small ints and short runs of anything.
pub fn msgpack_like(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(24) {
        match rng.below(3) {
            0 => out.push(*rng.pick(&MARKERS)),
            1 => out.push(rng.byte() & 0x7f),
            _ => out.extend((0..rng.below(6)).map(|_| rng.byte())),
        }
    }
    out
}

/// `text` with one to four edits from JSON's own tokens and random characters.
pub fn json(rng: &mut Rng, text: &str) -> Vec<u8> {
    let mut out = text.as_bytes().to_vec();
    for _ in 0..edits(rng) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 => {
                out.splice(at..at, rng.pick(&JSON_TOKENS).bytes());
            }
            1 => {
                let end = (at + 1 + rng.below(6)).min(out.len());
                out.drain(at..end);
            }
            2 => out.truncate(at),
            // Byte-level edits, which may leave the text invalid UTF-8.
            _ => return bytes(rng, &out),
        }
    }
    out
}

/// Random JSON-ish text: tokens strung together, sometimes nested deeply.
pub fn json_like(rng: &mut Rng) -> Vec<u8> {
    let mut out = String::new();
    if rng.chance(5) {
        let depth = 100 + rng.below(60);
        out.push_str(&"[".repeat(depth));
        out.push_str(&"]".repeat(depth));
    }
    for _ in 0..rng.below(12) {
        let token = *rng.pick(&JSON_TOKENS);
        out.push_str(token);
    }
    out.into_bytes()
}

/// A Go-duration-like string: numbers (huge, fractional, malformed) with units (valid,
/// invalid, missing), or a mutation of a valid one.
pub fn duration(rng: &mut Rng) -> String {
    const NUMBERS: [&str; 12] = [
        "0",
        "1",
        "30",
        "1.5",
        ".5",
        "5.",
        "1.2.3",
        "99999999999999999999",
        "1e3",
        "18446744073709551616",
        "0.0000000000000000001",
        "-1",
    ];
    const UNITS: [&str; 10] = ["h", "m", "s", "ms", "", "us", "µs", "d", " ", "hm"];
    let mut out = String::new();
    for _ in 0..1 + rng.below(3) {
        let number = if rng.chance(20) {
            "9".repeat(1 + rng.below(400))
        } else {
            rng.pick(&NUMBERS).to_string()
        };
        out.push_str(&number);
        let unit = *rng.pick(&UNITS);
        out.push_str(unit);
    }
    if rng.chance(20) {
        let mutated = bytes(rng, out.as_bytes());
        return String::from_utf8_lossy(&mutated).into_owned();
    }
    out
}
