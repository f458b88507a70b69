//! Roundabout exits as a rider counts them: the ways off the ring at each junction passed after
//! entering (at the entry itself, those that do not turn back beside the way come in on), plus
//! the one taken. Not counted: ways the profile may not take off the ring (an entry
//! that is one-way towards the ring, a footway a rider would have to push along), service roads
//! (`highway=service`: driveways, parking aisles) and unnamed dead ends (driveways mapped as
//! another highway type).
//! `highway=mini_roundabout` is a node, not a ring: the pipeline keeps it a plain junction, so
//! guidance names the turn taken there.

use super::Piece;
use super::passes::Seg;
use crate::city::{City, Profile};
use crate::graph::{ArcId, BikeAccess, way_flags};

/// Within this of the way back, a way leaving the ring's entry node turns back (the other
/// carriageway of the arm come in on) and is no exit passed.
const ENTRY_BACK_DEG: f64 = 60.0;

/// The exit number (1-based) of a roundabout stretch.
pub(crate) fn exit_number(city: &City, pieces: &[Piece], seg: &Seg, profile: Profile) -> u32 {
    let mut passed = 0;
    for k in seg.first.max(1)..seg.end {
        // The junction at the tail of piece `k`; at the ring's entry the rider has not yet joined
        // it (a way leaving there is behind them or taken instead of the ring).
        let (prev, cur) = (&pieces[k - 1], &pieces[k]);
        if !prev.ring && cur.ring && prev.reaches_head {
            // The entry: a way leaving here that does not turn back beside the way come in on
            // (one-way arms that pass through the ring's node, in on one side and out on the
            // other) is an exit the rider passes as they join.
            let g = &city.graph;
            let back = (g.arc_bearing_end(prev.arc) as f64 + 180.0).rem_euclid(360.0);
            let beside_back = |a: ArcId| {
                let d = (g.arc_bearing_start(a) as f64 - back).rem_euclid(360.0);
                d.min(360.0 - d) < ENTRY_BACK_DEG
            };
            if city
                .choices_after(prev.arc, profile)
                .any(|a| a != cur.arc && counts_as_exit(city, a, profile) && !beside_back(a))
            {
                passed += 1;
            }
            continue;
        }
        if !prev.ring || !prev.reaches_head {
            continue;
        }
        if city
            .choices_after(prev.arc, profile)
            .any(|a| a != cur.arc && counts_as_exit(city, a, profile))
        {
            passed += 1;
        }
    }
    passed + 1
}

/// Whether a way off the ring is an exit a rider counts.
fn counts_as_exit(city: &City, arc: ArcId, profile: Profile) -> bool {
    let g = &city.graph;
    let way = g.arc_way(arc) as usize;
    // Another piece of the ring, or a service road (a driveway, a parking aisle): OSRM does not
    // count service roads either.
    if g.way_flags[way] & (way_flags::ROUNDABOUT | way_flags::SERVICE) != 0 {
        return false;
    }
    let attrs = g.arc_attrs[arc as usize];
    let usable = match profile {
        Profile::Cycling => attrs.bike() == BikeAccess::Ride,
        Profile::Walking => attrs.foot(),
    };
    if !usable {
        return false;
    }
    // An unnamed way that ends where it leaves the ring's next node is a driveway.
    let head = g.arc_head(arc) as usize;
    let adj = &city.adjacency;
    let dead_end = adj.first_out[head + 1] - adj.first_out[head] <= 1;
    !(dead_end && g.way_name[way] == 0 && g.way_ref[way] == 0)
}
