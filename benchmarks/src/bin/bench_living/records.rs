//! Records under races: two writers of one estate's 20 outputs apply at once, 5 rounds, while
//! another estate reads them in a loop. A run succeeds first time when every writer either
//! recorded or was refused because the other held the estate, and every read saw one apply's
//! outputs. Outputs lost: applies that recorded but whose serial the head does not count, and
//! outputs left holding another apply's value.

use std::time::Instant;

use acceptance::Cluster;
use acceptance::neighbours::records_race;

use crate::plane::Plane;
use crate::{Scenario, Tally};

const OUTPUTS: usize = 20;
const ROUNDS: usize = 5;

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        name: "records: two writers of one estate, a reader",
        run: race,
        apiserver_args: "",
    }]
}

fn race(cluster: &Cluster, _: &Plane, tally: &mut Tally) {
    let started = Instant::now();
    let race = records_race(cluster, cluster.kubeconfig(), OUTPUTS, ROUNDS);
    tally.seconds.push(started.elapsed().as_secs_f64());
    let counted = race.counts();
    let mixed = race.mixed_reads();
    match &counted {
        Ok((recorded, _)) => {
            let committed = race.committed.unwrap_or(0);
            let unequal = race.values.windows(2).filter(|w| w[0] != w[1]).count();
            tally.lost += usize::try_from(recorded.abs_diff(committed)).unwrap_or(usize::MAX) + unequal;
        }
        Err(e) => tally.error(e),
    }
    if let Some(failure) = &race.read_failure {
        tally.error(failure);
    }
    if counted.is_ok() && mixed == 0 && race.read_failure.is_none() {
        tally.first += 1;
    } else {
        tally.never += 1;
        if mixed > 0 {
            tally.errors.push(format!("{mixed} reads saw two applies"));
        }
    }
}
