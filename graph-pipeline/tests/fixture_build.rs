//! Junction facts, access and safety rules on the hand-drawn fixture `test/fixtures/junctions.osm`.

mod common;

use common::*;
use quietway_engine::graph::{BikeAccess, SafetyClass, TrafficControl, way_flags};

fn fixture_graph() -> quietway_engine::graph::CityGraph {
    build_city("nyc", &[fixture("junctions.osm")], 1).unwrap().0
}

fn way_index(g: &quietway_engine::graph::CityGraph, id: i64) -> usize {
    g.way_osm_id.iter().position(|&w| w == id).unwrap()
}

#[test]
fn oneway_primary_avenue_is_very_busy_ridden_one_way_and_walked_the_other() {
    let g = fixture_graph();
    let (_, fwd) = arc(&g, 102, 5, 6);
    assert_eq!(fwd.bike(), BikeAccess::Ride);
    assert_eq!(fwd.safety_class(), SafetyClass::VeryBusy);
    let (_, bwd) = arc(&g, 102, 6, 5);
    // Against the one-way the bike is walked along the pavement, never ridden.
    assert_eq!(bwd.bike(), BikeAccess::Push);
    assert!(bwd.foot(), "pedestrians walk both ways");
    assert_eq!(g.string(g.way_ref[way_index(&g, 102)]), "NY 1");
}

#[test]
fn contraflow_street_is_rideable_both_ways() {
    let g = fixture_graph();
    let (_, fwd) = arc(&g, 104, 1, 4);
    let (_, bwd) = arc(&g, 104, 4, 1);
    assert_eq!(fwd.bike(), BikeAccess::Ride);
    assert!(!fwd.contraflow());
    assert_eq!(bwd.bike(), BikeAccess::Ride);
    assert!(bwd.contraflow());
}

#[test]
fn signed_route_upgrades_quiet_cycleway_and_names_the_route() {
    let g = fixture_graph();
    let (_, a) = arc(&g, 105, 5, 8);
    assert_eq!(a.safety_class(), SafetyClass::Cycleway);
    let w = way_index(&g, 105);
    assert!(g.way_flags[w] & way_flags::CYCLE_ROUTE != 0);
    assert_eq!(
        g.route_names(w as u32).collect::<Vec<_>>(),
        vec!["Test Greenway"]
    );
    // A quiet street not on a route stays quiet, with no route names.
    let (_, q) = arc(&g, 101, 1, 2);
    assert_eq!(q.safety_class(), SafetyClass::Quiet);
    assert_eq!(g.route_names(way_index(&g, 101) as u32).count(), 0);
}

#[test]
fn footway_is_pushed_and_sidewalk_is_walk_only() {
    let g = fixture_graph();
    let (_, a) = arc(&g, 106, 3, 6);
    assert_eq!(a.bike(), BikeAccess::Push);
    assert_eq!(a.safety_class(), SafetyClass::Shared);
    // New York forbids riding on sidewalks (NYC Admin Code 19-176); the bike is walked along the
    // road's own arcs, not on the sidewalk way (which would capture cycling waypoints).
    let (_, s) = arc(&g, 116, 1, 29);
    assert_eq!(s.bike(), BikeAccess::No);
    assert!(s.foot());
    let (_, d) = arc(&g, 114, 25, 27);
    assert_eq!(d.bike(), BikeAccess::Push, "bicycle=dismount is pushed");
}

#[test]
fn private_roads_motorways_and_dead_end_ferries_are_left_out() {
    let g = fixture_graph();
    assert!(arcs_of_way(&g, 107).is_empty(), "access=private");
    assert!(arcs_of_way(&g, 108).is_empty(), "motorway");
    assert!(!g.node_osm_id.contains(&10));
    // The ferry is routable (tests/rules.rs, tests/scenarios/ferry*.scenario) but this one ends at a
    // pier with no street: it leads nowhere and is dropped.
    assert!(arcs_of_way(&g, 115).is_empty(), "dead-end ferry");
    assert!(g.way_flags[way_index(&g, 115)] & way_flags::FERRY != 0);
}

#[test]
fn lighting_and_surface_flags() {
    let g = fixture_graph();
    let lit = g.way_flags[way_index(&g, 101)];
    assert!(lit & way_flags::LIT != 0 && lit & way_flags::LIT_TAGGED != 0);
    let top = g.way_flags[way_index(&g, 103)];
    assert!(top & way_flags::LIT == 0 && top & way_flags::LIT_TAGGED != 0);
    assert!(top & way_flags::COBBLES != 0);
    let untagged = g.way_flags[way_index(&g, 104)];
    assert!(untagged & way_flags::LIT == 0, "untagged counts as not lit");
}

#[test]
fn traffic_controls_and_their_direction() {
    let g = fixture_graph();
    let node = |osm: i64| g.node_osm_id.iter().position(|&n| n == osm).unwrap();
    assert_eq!(
        TrafficControl::from_u8(g.node_control[node(2)]),
        TrafficControl::Signals
    );
    assert_eq!(
        TrafficControl::from_u8(g.node_control[node(14)]),
        TrafficControl::Stop
    );
    // direction=forward: applies to traffic along the way (7 → 14), not against it (8 → 14).
    assert!(arc(&g, 103, 7, 14).1.head_control());
    assert!(!arc(&g, 103, 8, 14).1.head_control());
}

#[test]
fn roundabout_is_oneway_and_flagged() {
    let g = fixture_graph();
    let w = way_index(&g, 110);
    assert!(g.way_flags[w] & way_flags::ROUNDABOUT != 0);
    let arcs = arcs_of_way(&g, 110);
    assert!(!arcs.is_empty());
    // Counter-clockwise 21 → (24) → 23 → 22 → 21 is rideable, the reverse is not; node 24 is only
    // shape (no other way meets it there).
    assert_eq!(arc(&g, 110, 21, 23).1.bike(), BikeAccess::Ride);
    assert_eq!(arc(&g, 110, 23, 21).1.bike(), BikeAccess::No);
    assert!(!g.node_osm_id.contains(&24));
}

#[test]
fn bearings_are_stored_per_arc() {
    let g = fixture_graph();
    let (east, _) = arc(&g, 101, 1, 2);
    assert_eq!(g.arc_bearing_start(east), 90);
    assert_eq!(g.arc_bearing_end(east), 90);
    let (west, _) = arc(&g, 101, 2, 1);
    assert_eq!(g.arc_bearing_start(west), 270);
    let (north, _) = arc(&g, 105, 2, 5);
    assert_eq!(g.arc_bearing_start(north), 0);
}

#[test]
fn no_left_turn_is_stored_and_forbids_that_turn_alone() {
    let g = fixture_graph();
    // No node is copied: node 5 exists once, and Main Avenue's eastbound arc into it still rides.
    assert_eq!(
        (0..g.node_count())
            .filter(|&v| g.node_osm_id[v] == 5)
            .count(),
        1
    );
    let (into5, attrs) = arc(&g, 102, 4, 5);
    assert_eq!(attrs.bike(), BikeAccess::Ride);
    // The restriction is stored as the arc pair (from, to) and becomes a forbidden turn.
    let stored = quietway_engine::turns::stored_restrictions(&g);
    assert!(stored.iter().any(|r| r.arcs[0] == into5), "{stored:?}");
    let turns = quietway_engine::turns::TurnGraph::new(&g, &stored);
    let outs: Vec<(i64, bool)> = turns
        .turns_out_of(into5)
        .map(|t| {
            let b = turns.node_arc[turns.turn_to[t as usize] as usize];
            (
                g.node_osm_id[g.arc_head(b) as usize],
                turns.turn_flags[t as usize] & quietway_engine::turns::turn_flags::NO_BIKE != 0,
            )
        })
        .collect();
    // Straight on (to 6) and right (to 2) are allowed, left (to 8) is not.
    assert!(outs.contains(&(6, false)), "{outs:?}");
    assert!(outs.contains(&(2, false)), "{outs:?}");
    assert!(outs.contains(&(8, true)), "{outs:?}");
}

#[test]
fn except_bicycle_restrictions_are_not_applied() {
    let g = fixture_graph();
    let stored = quietway_engine::turns::stored_restrictions(&g);
    assert!(
        stored
            .iter()
            .all(|r| g.node_osm_id[g.arc_head(r.arcs[0]) as usize] != 4),
        "{stored:?}"
    );
}

#[test]
fn bicycle_parking_and_city_facts() {
    let g = fixture_graph();
    assert_eq!(g.parking.len(), 1);
    assert_eq!(g.parking[0].capacity, 10);
    assert_eq!(g.parking[0].covered, 1);
    let city = g.city.as_ref().unwrap();
    assert_eq!(city.id, "nyc");
    assert_eq!(city.timezone, "America/New_York");
    assert!(city.has_lighting_data);
    assert!(!city.elevation_known);
    assert!(g.node_elevation.iter().all(|e| e.is_nan()));
    assert_eq!(city.areas.len(), 5, "the five boroughs");
}

#[test]
fn graph_file_round_trips_and_versions_follow_content() {
    let g = fixture_graph();
    let bytes = quietway_engine::format::to_bytes(&g).unwrap();
    let (back, v1) = quietway_engine::format::from_bytes(&bytes).unwrap();
    assert_eq!(back.arc_attrs, g.arc_attrs);
    assert_eq!(back.city, g.city);
    let again = quietway_engine::format::to_bytes(&fixture_graph()).unwrap();
    assert_eq!(
        quietway_engine::format::from_bytes(&again).unwrap().1,
        v1,
        "same input, same version"
    );
    let mut changed = g.clone();
    changed.edge_length_m[0] += 1.0;
    assert_ne!(
        quietway_engine::format::graph_version(&changed).unwrap(),
        v1
    );
    // The cycling and walking hierarchies' orders are optional sections: a graph with them
    // round-trips them, one without them (written before they existed) reads with none, and a
    // city loaded from that orders its cycling turns and its junctions itself, as the pipeline
    // would have.
    let turns = quietway_engine::turns::TurnGraph::new(
        &g,
        &quietway_engine::turns::stored_restrictions(&g),
    );
    let mut ordered = g.clone();
    let usable = quietway_engine::metric::cycling_can_use(&g, &turns);
    ordered.cycling_order = quietway_engine::order::cycling_order(&turns, &g, &usable);
    ordered.walking_order = quietway_engine::order::nested_dissection_order(&g);
    let with = quietway_engine::format::to_bytes(&ordered).unwrap();
    let (back, _) = quietway_engine::format::from_bytes(&with).unwrap();
    assert_eq!(back.cycling_order, ordered.cycling_order);
    assert_eq!(back.walking_order, ordered.walking_order);
    let mut without = ordered.clone();
    without.cycling_order.clear();
    without.walking_order.clear();
    let (old, _) =
        quietway_engine::format::from_bytes(&quietway_engine::format::to_bytes(&without).unwrap())
            .unwrap();
    assert!(old.cycling_order.is_empty() && old.walking_order.is_empty());
    let city = quietway_engine::city::City::from_graph(old, "old".into(), None).unwrap();
    assert_eq!(city.graph.cycling_order, ordered.cycling_order);
    assert_eq!(city.graph.walking_order, ordered.walking_order);
    // A junction order that is not a permutation of the nodes is refused.
    let mut bad = ordered.clone();
    bad.walking_order[0] = bad.walking_order[1];
    assert!(bad.validate().is_err());
}
