//! Every shared extract builds, and real New York ways get the classes a New York rider expects.

mod common;

use common::*;
use quietway_engine::graph::{BikeAccess, SafetyClass, way_flags};

#[test]
fn every_shared_extract_builds() {
    let files = shared_extracts();
    assert!(files.len() >= 15);
    for (city, f) in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let (g, report) = build_city(&city, std::slice::from_ref(&f), 25)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(g.edge_count() > 50, "{name}: {} edges", g.edge_count());
        assert!(report.bike_arcs > 0 && report.foot_arcs > 0, "{name}");
        g.validate().unwrap();
    }
}

fn class_of(g: &quietway_engine::graph::CityGraph, way: i64) -> Vec<SafetyClass> {
    arcs_of_way(g, way)
        .into_iter()
        .filter(|(_, _, _, a)| a.bike() == BikeAccess::Ride)
        .map(|(_, _, _, a)| a.safety_class())
        .collect()
}

#[test]
fn new_york_classes_match_what_riders_expect() {
    let (g, _) = build_city(
        "nyc",
        &[shared_data().join("osm/nyc-manhattan-below-42nd.osm.pbf")],
        25,
    )
    .unwrap();
    // Hudson River Greenway (highway=cycleway, foot=no, part of signed routes): cycleway.
    let greenway = class_of(&g, 132500859);
    assert!(!greenway.is_empty());
    assert!(
        greenway.iter().all(|c| *c == SafetyClass::Cycleway),
        "{greenway:?}"
    );
    // 8th Avenue with its protected track (cycleway:left=track): quiet or cycleway on the rideable arcs.
    let eighth = class_of(&g, 127693383);
    assert!(!eighth.is_empty());
    assert!(
        eighth
            .iter()
            .all(|c| matches!(c, SafetyClass::Quiet | SafetyClass::Cycleway)),
        "{eighth:?}"
    );
    // 1st Avenue's general lanes without a bike lane (4 lanes, primary): very busy.
    let first = class_of(&g, 1625);
    assert!(!first.is_empty());
    assert!(
        first.iter().all(|c| *c == SafetyClass::VeryBusy),
        "{first:?}"
    );
    // Lexington Avenue (secondary, 4 lanes incl. bus lane, no bike lane): busy or very busy.
    let lex = class_of(&g, 458166896);
    assert!(
        lex.iter()
            .all(|c| matches!(c, SafetyClass::Busy | SafetyClass::VeryBusy)),
        "{lex:?}"
    );
    // East Broadway with painted lanes on a 25 mph street with one lane each way: quiet.
    let eb = class_of(&g, 5673424);
    assert!(
        eb.iter()
            .all(|c| matches!(c, SafetyClass::Quiet | SafetyClass::Cycleway)),
        "{eb:?}"
    );
    // Sidewalks mapped as ways of their own carry the name of the street beside them, for
    // guidance only: routing takes them as unnamed.
    let beside: Vec<usize> = (0..g.way_name.len())
        .filter(|&w| g.way_flags[w] & way_flags::NAME_BESIDE != 0)
        .collect();
    assert!(beside.len() > 4000, "{} sidewalks named", beside.len());
    let arc_of = |w: usize| (0..g.arc_count() as u32).find(|&a| g.arc_way(a) as usize == w);
    for &w in beside.iter().step_by(97) {
        assert_ne!(g.way_name[w], 0);
        if let Some(a) = arc_of(w) {
            assert_eq!(g.routing_name(a), 0);
        }
    }
    let broadway = (0..g.way_name.len())
        .filter(|&w| {
            g.way_flags[w] & way_flags::NAME_BESIDE != 0 && g.string(g.way_name[w]) == "Broadway"
        })
        .count();
    assert!(broadway >= 10, "{broadway} sidewalks of Broadway");
}

#[test]
fn a_merged_extract_builds_to_the_same_graph_version_every_time() {
    // nyc-manhattan-below-42nd is an osmium merge of extracts of different dates: some elements appear
    // twice, and the newest version must win whatever order the blobs are decoded in.
    let file = shared_data().join("osm/nyc-manhattan-below-42nd.osm.pbf");
    let v1 = quietway_engine::format::graph_version(
        &build_city("nyc", std::slice::from_ref(&file), 25)
            .unwrap()
            .0,
    )
    .unwrap();
    let v2 = quietway_engine::format::graph_version(
        &build_city("nyc", std::slice::from_ref(&file), 25)
            .unwrap()
            .0,
    )
    .unwrap();
    assert_eq!(v1, v2);
}
