//! Neighbours: two estates apply into one namespace at the same time, some objects under the
//! same names and some named by the server (`generate_name`), through a proxy that delays each
//! request up to 300 ms. Neither adopts, updates or deletes the other's objects: a name both
//! want goes to whichever created it first, and the other's apply refuses it naming the owner.
//! Both converge once the loser lets go of the name. Then two states of one estate.

use std::collections::BTreeSet;

use acceptance::Cluster;
use acceptance::neighbours::{Neighbours, Sizes, flat};

const SIZES: Sizes = Sizes {
    shared: 40,
    own: 40,
    generated: 20,
};

#[test]
fn two_estates_in_one_namespace_never_touch_each_others_objects() {
    let cluster = Cluster::start();
    let n = Neighbours::new(&cluster, SIZES, false);
    let applied = n.apply_both();

    let objects = n.objects();
    for f in &objects {
        let label = f
            .label
            .as_deref()
            .unwrap_or_else(|| panic!("{} has no estate label", f.name));
        assert_eq!(
            f.data.as_deref(),
            Some(label),
            "{}, labelled {label}, holds another's data",
            f.name
        );
    }
    let won = n.estates.each_ref().map(|e| n.won_by(e));
    for estate in &n.estates {
        let count = |prefix: &str| {
            objects
                .iter()
                .filter(|f| f.label.as_deref() == Some(estate) && f.name.starts_with(prefix))
                .count()
        };
        assert_eq!(
            count(&format!("own-{estate}-")),
            SIZES.own,
            "estate {estate}'s own objects"
        );
        assert_eq!(
            count(&format!("gen-{estate}-")),
            SIZES.generated,
            "estate {estate}'s generated objects"
        );
    }
    assert_eq!(&won[0] | &won[1], n.shared, "each shared name goes to one estate");
    assert_eq!(
        objects.len(),
        2 * (SIZES.own + SIZES.generated) + SIZES.shared,
        "no duplicate"
    );

    // The loser of a name was refused it, naming the owner; nothing else failed.
    for (i, out) in applied.iter().enumerate() {
        let other = &n.estates[1 - i];
        let lost = won[1 - i].len();
        if lost == 0 {
            assert!(out.success(), "estate {} lost no name, yet:\n{out}", n.estates[i]);
            continue;
        }
        assert!(
            !out.success(),
            "estate {} applied names estate {other} holds:\n{out}",
            n.estates[i]
        );
        let refusals = flat(out)
            .matches(&format!("carries the label tofu-estate={other}"))
            .count();
        assert_eq!(
            refusals, lost,
            "one refusal naming estate {other} per name lost:\n{out}"
        );
    }

    // Each lets go of the names it lost: both converge, and a destroy takes only its own.
    for (i, won) in won.iter().enumerate() {
        n.converge(i, won)
            .unwrap_or_else(|e| panic!("estate {}: {e}", n.estates[i]));
    }
    let destroyed = n.destroy(0);
    assert!(destroyed.success(), "{destroyed}");
    let left = n.objects();
    assert!(
        left.iter()
            .all(|f| f.label.as_deref() == Some(n.estates[1].as_str())),
        "the destroy of estate {} left objects or took its neighbour's: {left:?}",
        n.estates[0]
    );
    assert_eq!(left.len(), SIZES.own + SIZES.generated + won[1].len());
    let destroyed = n.destroy(1);
    assert!(destroyed.success(), "{destroyed}");
    assert_eq!(n.objects(), Vec::new(), "left over");
}

/// The same with two workspaces of one estate (a user's mistake): what one creates while the
/// other runs is refused by the other, saying two states claim one estate, and a destroy of
/// either never deletes what the other created.
#[test]
fn two_states_of_one_estate_are_told_so_and_never_delete_each_others_objects() {
    let cluster = Cluster::start();
    let n = Neighbours::new(&cluster, SIZES, true);
    let estate = &n.estates[0];
    let applied = n.apply_both();

    assert_eq!(
        n.objects().len(),
        SIZES.shared + SIZES.own + 2 * SIZES.generated,
        "each name once, and each state's generated objects"
    );
    let states = [n.names_in_state(0), n.names_in_state(1)];
    let refusals: usize = applied
        .iter()
        .map(|out| {
            let text = flat(out);
            let told = text.matches("Two states claim one estate").count();
            let named = text
                .matches(&format!("was created by another apply of estate \"{estate}\""))
                .count();
            assert_eq!(told, named, "{out}");
            told
        })
        .sum();
    assert!(
        refusals > 0,
        "neither apply noticed the other:\n{}\n{}",
        applied[0],
        applied[1]
    );
    // Both runs began before either created anything: no object is in both states.
    assert_eq!(
        states[0].intersection(&states[1]).count(),
        0,
        "adopted by both states"
    );
    eprintln!("neighbours: two states of one estate: {refusals} objects refused as the other's");

    // A destroy of the second leaves everything the first created in place.
    let destroyed = n.destroy(1);
    assert!(destroyed.success(), "{destroyed}");
    let left: BTreeSet<String> = n.objects().into_iter().map(|f| f.name).collect();
    let lost: Vec<&String> = states[0].iter().filter(|name| !left.contains(*name)).collect();
    assert!(
        lost.is_empty(),
        "the second state's destroy deleted the first's objects: {lost:?}"
    );
    n.destroy(0);
}
