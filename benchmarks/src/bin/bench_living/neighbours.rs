//! Neighbours: two estates apply 200 ConfigMaps each into one namespace at once (50 names both
//! want, 100 of their own, 50 the server names), through 300 ms of latency; each loser of a
//! name must be refused it naming the owner, and converges once it lets go of it. Then two
//! states of one estate: each object the other created while it ran is refused as such, and a
//! destroy of one never deletes the other's objects.

use std::collections::BTreeSet;
use std::time::Instant;

use acceptance::Cluster;
use acceptance::neighbours::{Neighbours, Sizes, flat};

use crate::plane::Plane;
use crate::{Scenario, Tally};

const SIZES: Sizes = Sizes {
    shared: 50,
    own: 100,
    generated: 50,
};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "neighbours: two estates, one namespace",
            run: two_estates,
            apiserver_args: "",
        },
        Scenario {
            name: "neighbours: two states of one estate",
            run: two_states,
            apiserver_args: "",
        },
    ]
}

fn two_estates(cluster: &Cluster, _: &Plane, tally: &mut Tally) {
    let n = Neighbours::new(cluster, SIZES, false);
    let started = Instant::now();
    let applied = n.apply_both();
    tally.seconds.push(started.elapsed().as_secs_f64());
    let won = n.estates.each_ref().map(|e| n.won_by(e));
    // As expected: whoever lost no name succeeded; a loser was refused each name it lost, and
    // nothing else.
    let as_expected = (0..2).all(|i| {
        let lost = won[1 - i].len();
        let refusals = flat(&applied[i])
            .matches(&format!("carries the label tofu-estate={}", n.estates[1 - i]))
            .count();
        applied[i].success() == (lost == 0) && refusals == lost
    });
    if as_expected {
        tally.first += 1;
    } else {
        applied.iter().for_each(|out| tally.error(&out.stderr));
    }
    let expected = 2 * (SIZES.own + SIZES.generated) + SIZES.shared;
    tally.duplicates += n.objects().len().saturating_sub(expected);
    match (0..2)
        .map(|i| n.converge(i, &won[i]))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(_) if !as_expected => tally.rerun += 1,
        Ok(_) => {}
        Err(e) => {
            tally.never += 1;
            tally.error(&e);
        }
    }
    n.destroy(0);
    n.destroy(1);
    tally.left += n.objects().len();
}

fn two_states(cluster: &Cluster, _: &Plane, tally: &mut Tally) {
    let n = Neighbours::new(cluster, SIZES, true);
    let started = Instant::now();
    let applied = n.apply_both();
    tally.seconds.push(started.elapsed().as_secs_f64());
    let states = [n.names_in_state(0), n.names_in_state(1)];
    let told = applied
        .iter()
        .all(|out| out.success() || flat(out).contains("Two states claim one estate"));
    let in_both = states[0].intersection(&states[1]).count();
    if told && in_both == 0 {
        tally.first += 1;
    } else {
        applied.iter().for_each(|out| tally.error(&out.stderr));
    }
    let expected = SIZES.shared + SIZES.own + 2 * SIZES.generated;
    tally.duplicates += n.objects().len().saturating_sub(expected);
    // The second's destroy must leave the first's objects: those missing count as lost.
    n.destroy(1);
    let left: BTreeSet<String> = n.objects().into_iter().map(|f| f.name).collect();
    tally.lost += states[0].iter().filter(|name| !left.contains(*name)).count();
    n.destroy(0);
    tally.left += n.objects().len();
}
