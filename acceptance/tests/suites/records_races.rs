//! Records under races: two states claim one estate (two workspaces by mistake) and apply its
//! outputs at the same time, round after round, while another estate reads them. Of two
//! writers at once one is refused, naming the estate, and writes nothing; no history entry is
//! lost (the serial counts the applies that succeeded); and every read sees the outputs of one
//! apply, never a mix.

use acceptance::Cluster;
use acceptance::neighbours::records_race;

#[test]
fn two_writers_of_one_estate_lose_nothing_and_readers_never_see_a_mix() {
    let cluster = Cluster::start();
    let race = records_race(&cluster, cluster.kubeconfig(), 20, 5);
    if let Some(failure) = &race.read_failure {
        panic!("{failure}");
    }
    assert_eq!(
        race.mixed_reads(),
        0,
        "reads saw the outputs of two applies: {:?}",
        race.reads
    );
    let (recorded, refused) = race.counts().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        race.committed,
        Some(recorded),
        "{recorded} applies recorded ({refused} refused), yet the serial is {:?}",
        race.committed
    );
    assert_eq!(race.values.len(), 20);
    assert!(
        race.values.windows(2).all(|w| w[0] == w[1]),
        "the outputs hold values of two applies: {:?}",
        race.values
    );
    eprintln!(
        "records races: 5 rounds of two writers: {recorded} applies recorded, {refused} refused; {} reads, each of one apply",
        race.reads.len()
    );
}
