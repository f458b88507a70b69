//! The turn model on hand-drawn maps (test/fixtures/turns-*.osm): restrictions via a node and via a
//! way, no U-turn mid-route, an unsignalised crossing of a very busy road avoided by SuperSafe but taken
//! by Direct, and two parallel paths ridden without a zigzag at night.

mod common;

use common::*;
use quietway_engine::city::{City, Profile, Route, RouteRequest};

fn city(fixture_name: &str) -> City {
    let (g, _) = build_city("nyc", &[fixture(fixture_name)], 1).unwrap();
    City::from_graph(g, "test".into(), None).unwrap()
}

fn route(
    city: &City,
    from: [f64; 2],
    to: [f64; 2],
    profile: Profile,
    supersafe: bool,
    night: bool,
) -> Route {
    city.route(&RouteRequest {
        waypoints: vec![from, to],
        profile,
        supersafe,
        night,
        bearing: None,
        departure: None,
    })
    .unwrap()
    .expect("a route")
}

/// The names of the ways ridden, in order, repeats merged ("" for unnamed ways).
fn ways(city: &City, r: &Route) -> Vec<String> {
    let g = &city.graph;
    let mut out: Vec<String> = Vec::new();
    for p in r.legs.iter().flat_map(|l| &l.pieces) {
        let name = g.string(g.way_name[g.arc_way(p.arc) as usize]).to_string();
        if out.last() != Some(&name) {
            out.push(name);
        }
    }
    out
}

/// No piece travels back along the segment the one before it travelled.
fn assert_no_u_turn(r: &Route) {
    for leg in &r.legs {
        for p in leg.pieces.windows(2) {
            assert_ne!(p[0].arc ^ 1, p[1].arc, "U-turn in {:?}", leg.pieces);
        }
    }
}

#[test]
fn a_via_way_restriction_is_obeyed_and_binds_only_trips_from_its_from_way() {
    let c = city("turns-restrictions.osm");
    // Alpha Street → Delta Street: the right turn from Link Lane into Delta Street is forbidden when
    // Link Lane was entered from Alpha Street, so the route goes round by Bravo, Fox and Echo.
    let r = route(
        &c,
        [-73.9955, 40.7400],
        [-73.9955, 40.7394],
        Profile::Cycling,
        false,
        false,
    );
    assert_eq!(
        ways(&c, &r),
        [
            "Alpha Street",
            "Bravo Street",
            "Fox Lane",
            "Echo Street",
            "Delta Street"
        ]
    );
    assert_no_u_turn(&r);
    // Starting on Link Lane itself, the same turn is allowed.
    let r = route(
        &c,
        [-73.9950, 40.7397],
        [-73.9955, 40.7394],
        Profile::Cycling,
        false,
        false,
    );
    assert_eq!(ways(&c, &r), ["Link Lane", "Delta Street"]);
    // Walking ignores turn restrictions.
    let r = route(
        &c,
        [-73.9955, 40.7400],
        [-73.9955, 40.7394],
        Profile::Walking,
        false,
        false,
    );
    assert_eq!(ways(&c, &r), ["Alpha Street", "Link Lane", "Delta Street"]);
}

#[test]
fn a_via_node_restriction_is_obeyed_without_a_u_turn() {
    let c = city("turns-restrictions.osm");
    // Golf Street → Hotel Lane: the right turn at n7 is forbidden; a node-based router rode on to n8
    // and came back with a U-turn. The turn model goes round the block instead.
    let r = route(
        &c,
        [-73.9955, 40.7420],
        [-73.9950, 40.7416],
        Profile::Cycling,
        true,
        false,
    );
    assert_no_u_turn(&r);
    assert_eq!(
        ways(&c, &r),
        [
            "Golf Street",
            "India Street",
            "Kilo Lane",
            "Juliet Street",
            "Hotel Lane"
        ]
    );
    // From India Street the same turn is allowed.
    let r = route(
        &c,
        [-73.9945, 40.7420],
        [-73.9950, 40.7416],
        Profile::Cycling,
        true,
        false,
    );
    assert_eq!(ways(&c, &r), ["India Street", "Hotel Lane"]);
}

#[test]
fn supersafe_crosses_a_very_busy_road_at_the_signal_and_direct_straight_across() {
    let c = city("turns-crossing.osm");
    let (from, to) = ([-73.9950, 40.72925], [-73.9950, 40.73075]);
    let direct = route(&c, from, to, Profile::Cycling, false, false);
    assert_eq!(ways(&c, &direct), ["Ash Street"]);
    let safe = route(&c, from, to, Profile::Cycling, true, false);
    assert_eq!(
        ways(&c, &safe),
        [
            "Ash Street",
            "Low Lane",
            "Birch Street",
            "High Lane",
            "Ash Street"
        ]
    );
    assert_no_u_turn(&safe);
}

#[test]
fn parallel_paths_are_ridden_without_a_zigzag_at_night() {
    let c = city("turns-parallel.osm");
    let (from, to) = ([-73.99025, 40.7500], [-73.98475, 40.7500]);
    for supersafe in [true, false] {
        let r = route(&c, from, to, Profile::Cycling, supersafe, true);
        let w = ways(&c, &r);
        // One path the whole way (a single change of path at most), never back and forth.
        let links = w.iter().filter(|n| n.is_empty()).count();
        assert!(links <= 1, "supersafe {supersafe}: {w:?}");
        assert_no_u_turn(&r);
    }
}
