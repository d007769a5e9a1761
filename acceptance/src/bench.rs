//! What the benchmark binaries (`bench_plan`, `bench_query`) share: their command line.

/// The object counts given as arguments, or `default` when none are; a usage line naming
/// `program` and exit 2 on anything else.
pub fn sizes(program: &str, default: &[usize]) -> Vec<usize> {
    match std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<Vec<usize>, _>>()
    {
        Ok(sizes) if sizes.is_empty() => default.to_vec(),
        Ok(sizes) => sizes,
        Err(e) => {
            eprintln!("usage: {program} [N ...] (object counts): {e}");
            std::process::exit(2);
        }
    }
}
