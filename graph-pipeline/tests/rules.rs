//! One test per row of the safety and access rule table (docs/safety-rules.md).

use quietway_engine::graph::{BikeAccess, SafetyClass, way_flags};
use quietway_graph_pipeline::city::load_cities;
use quietway_graph_pipeline::rules::{WayProfile, classify, ferry_duration_s, node_passage};

fn tags(s: &str) -> Vec<(String, String)> {
    s.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.replace('_', " ").replace("  ", "_"))
        })
        .collect()
}

/// Tags in `k=v` form; use `__` for a literal underscore inside values (e.g. `cycleway=opposite__lane`).
fn classify_in(city: &str, s: &str) -> Option<WayProfile> {
    let rules = load_cities(None).unwrap()[city].rules();
    classify(&tags(s), &rules)
}

fn nyc(s: &str) -> WayProfile {
    classify_in("nyc", s).unwrap_or_else(|| panic!("{s} should be routable"))
}

fn fwd(s: &str) -> (SafetyClass, BikeAccess) {
    let p = nyc(s);
    (p.forward.safety_class(), p.forward.bike())
}

use BikeAccess::*;
use SafetyClass::*;

#[test]
fn separated_paths() {
    assert_eq!(fwd("highway=cycleway"), (Quiet, Ride));
    assert_eq!(
        fwd("highway=cycleway foot=designated segregated=no"),
        (Shared, Ride)
    );
    assert_eq!(
        fwd("highway=cycleway foot=designated segregated=yes"),
        (Quiet, Ride)
    );
    assert_eq!(fwd("highway=path"), (Shared, Ride));
    assert_eq!(fwd("highway=path foot=no"), (Quiet, Ride));
    assert_eq!(fwd("highway=footway bicycle=yes"), (Shared, Ride));
    assert_eq!(fwd("highway=footway"), (Shared, Push));
    assert_eq!(fwd("highway=pedestrian"), (Shared, Push));
    assert_eq!(fwd("highway=track"), (Shared, Ride));
}

#[test]
fn residential_and_living_streets() {
    assert_eq!(fwd("highway=living__street"), (Quiet, Ride));
    assert_eq!(fwd("highway=residential"), (Quiet, Ride));
    assert_eq!(fwd("highway=service"), (Quiet, Ride));
    assert_eq!(fwd("highway=residential maxspeed=30_mph"), (Moderate, Ride));
    assert_eq!(fwd("highway=residential maxspeed=35_mph"), (Busy, Ride));
    assert_eq!(
        fwd("highway=residential maxspeed=64"),
        (VeryBusy, Ride),
        "64 km/h = 40 mph"
    );
    assert_eq!(fwd("highway=residential lanes=2 oneway=yes"), (Busy, Ride));
}

#[test]
fn arterials_without_bike_infrastructure() {
    assert_eq!(fwd("highway=tertiary"), (Moderate, Ride));
    assert_eq!(fwd("highway=secondary"), (Moderate, Ride));
    assert_eq!(fwd("highway=secondary maxspeed=30_mph"), (Busy, Ride));
    assert_eq!(
        fwd("highway=primary"),
        (VeryBusy, Ride),
        "two lanes per direction by default"
    );
    assert_eq!(fwd("highway=primary lanes=2"), (Busy, Ride));
    assert_eq!(
        fwd("highway=secondary lanes=4 oneway=yes"),
        (VeryBusy, Ride)
    );
    assert_eq!(fwd("highway=trunk"), (VeryBusy, Ride));
}

#[test]
fn painted_lanes_buffers_and_protection() {
    assert_eq!(
        fwd("highway=secondary lanes=2 cycleway=lane"),
        (Quiet, Ride)
    );
    assert_eq!(
        fwd("highway=secondary lanes=2 cycleway=lane maxspeed=35_mph"),
        (Moderate, Ride)
    );
    assert_eq!(
        fwd("highway=secondary lanes=2 cycleway=lane parking:both=lane maxspeed=30_mph"),
        (Moderate, Ride)
    );
    assert_eq!(
        fwd("highway=secondary lanes=4 oneway=yes cycleway:left=lane"),
        (Busy, Ride)
    );
    assert_eq!(
        fwd("highway=secondary lanes=4 oneway=yes cycleway:left=track"),
        (Quiet, Ride)
    );
    assert_eq!(
        fwd(
            "highway=secondary lanes=4 oneway=yes cycleway:left=lane cycleway:left:separation=flex__post"
        ),
        (Quiet, Ride)
    );
    assert_eq!(
        fwd("highway=primary lanes=4 cycleway=shared__lane"),
        (VeryBusy, Ride),
        "sharrows do not help"
    );
    assert_eq!(
        fwd("highway=primary lanes=4 cycleway:right=separate"),
        (VeryBusy, Ride)
    );
}

#[test]
fn sides_follow_the_traffic_direction() {
    // Right-hand traffic: the right-side lane serves the forward direction only.
    let p = nyc("highway=secondary lanes=2 maxspeed=30_mph cycleway:right=track");
    assert_eq!(p.forward.safety_class(), Quiet);
    assert_eq!(p.backward.safety_class(), Busy);
    // London drives on the left: there the left-side lane is the forward one.
    let l = classify_in(
        "london",
        "highway=secondary lanes=2 maxspeed=30_mph cycleway:left=track",
    )
    .unwrap();
    assert_eq!(l.forward.safety_class(), Quiet);
    assert_eq!(l.backward.safety_class(), Busy);
}

#[test]
fn oneways_and_contraflow() {
    // Against a oneway the bike is walked on the pavement.
    let p = nyc("highway=residential oneway=yes");
    assert_eq!((p.forward.bike(), p.backward.bike()), (Ride, Push));
    assert_eq!(p.backward.safety_class(), Shared);
    let p = nyc("highway=residential oneway=-1");
    assert_eq!((p.forward.bike(), p.backward.bike()), (Push, Ride));
    let p = nyc("highway=residential oneway=yes sidewalk=no");
    assert_eq!(p.backward.bike(), No, "no pavement to walk on");
    let p = nyc("highway=cycleway oneway=yes");
    assert_eq!(p.backward.bike(), No, "a cycleway is not walked");
    let p = nyc("highway=residential oneway=yes oneway:bicycle=no");
    assert_eq!((p.forward.bike(), p.backward.bike()), (Ride, Ride));
    assert!(p.backward.contraflow());
    let p = nyc("highway=residential oneway=yes cycleway=opposite__lane");
    assert_eq!((p.forward.bike(), p.backward.bike()), (Ride, Ride));
    assert!(p.backward.contraflow());
    let p = nyc("highway=secondary lanes=1 oneway=yes cycleway:left=lane cycleway:left:oneway=-1");
    assert_eq!(p.backward.bike(), Ride);
    assert_eq!(
        p.backward.safety_class(),
        Quiet,
        "the contraflow lane serves the backward direction"
    );
    let p = nyc("highway=tertiary junction=roundabout");
    assert_eq!(
        (p.forward.bike(), p.backward.bike()),
        (Ride, No),
        "never walked against a roundabout"
    );
    // Walking ignores oneway.
    let p = nyc("highway=residential oneway=yes");
    assert!(p.forward.foot() && p.backward.foot());
}

#[test]
fn access_rules() {
    assert!(classify_in("nyc", "highway=motorway").is_none());
    assert!(classify_in("nyc", "highway=construction").is_none());
    assert!(classify_in("nyc", "highway=service access=private").is_none());
    assert_eq!(
        fwd("highway=service access=private bicycle=yes"),
        (Quiet, Ride)
    );
    let p = nyc("highway=residential bicycle=no");
    assert_eq!(p.forward.bike(), No);
    assert!(p.forward.foot());
    assert_eq!(fwd("highway=residential bicycle=dismount"), (Shared, Push));
    let p = nyc("highway=footway footway=sidewalk");
    assert_eq!(
        p.forward.bike(),
        No,
        "NYC Admin Code 19-176: not ridden; walked on the road's arcs"
    );
    assert!(p.forward.foot());
    let p = classify_in("los-angeles", "highway=footway footway=sidewalk").unwrap();
    assert_eq!(p.forward.bike(), Ride, "LAMC 56.15: ridden with care");
    assert_eq!(p.forward.safety_class(), Shared);
    let p = nyc("highway=steps");
    assert_eq!(p.forward.bike(), Push);
    assert!(p.forward.foot());
    assert_eq!(p.flags & way_flags::BICYCLE_RAMP, 0);
    let p = nyc("highway=steps ramp:bicycle=yes");
    assert_ne!(p.flags & way_flags::BICYCLE_RAMP, 0);
    assert_eq!(nyc("highway=steps bicycle=no").forward.bike(), No);
    // Service roads are marked: guidance does not count them as roundabout exits.
    assert_ne!(
        nyc("highway=service service=driveway").flags & way_flags::SERVICE,
        0
    );
    assert_ne!(nyc("highway=service").flags & way_flags::SERVICE, 0);
    assert_eq!(nyc("highway=residential").flags & way_flags::SERVICE, 0);
    assert!(classify_in("nyc", "highway=steps foot=no").is_none());
    let p = nyc("highway=cycleway");
    assert!(
        !p.forward.foot(),
        "cycleways are not walked unless foot is allowed"
    );
    assert!(nyc("highway=cycleway foot=yes").forward.foot());
    let p = nyc("highway=trunk foot=no");
    assert!(!p.forward.foot());
    assert!(
        classify_in("nyc", "highway=pedestrian area=yes").is_some(),
        "pedestrian areas are walked"
    );
    assert!(
        classify_in("nyc", "highway=service area=yes").is_some(),
        "an area of any highway class is used along its outline, as OSRM does"
    );
}

#[test]
fn ways_without_a_highway_tag_that_riders_use() {
    use quietway_graph_pipeline::rules::highway_of_untagged;
    // (tags, closed way, the highway it is read as)
    for (t, closed, want) in [
        ("man_made=pier", false, Some("footway")),
        ("man_made=pier", true, None), // a pier's outline
        ("bridge=movable", false, Some("unclassified")),
        ("bridge=movable railway=rail", false, None),
        ("railway=platform", true, Some("footway")),
        ("railway=platform level=-1", false, None),
        ("railway=platform layer=1", false, None),
        ("amenity=parking", true, Some("service")),
        ("amenity=parking parking=multi-storey", true, None),
        ("amenity=parking building=yes", true, None),
        ("amenity=parking access=private", true, None),
        ("amenity=parking", false, None),
        ("highway=footway man_made=pier", false, None),
    ] {
        assert_eq!(
            highway_of_untagged(&tags(t), closed),
            want,
            "{t} closed={closed}"
        );
    }
    // Walkers let onto a motorway walk a bike along it, in its direction only.
    let p = nyc("highway=motorway foot=yes");
    assert_eq!(p.forward.bike(), BikeAccess::Push);
    assert_eq!(p.backward.bike(), BikeAccess::No);
    assert!(classify_in("nyc", "highway=motorway").is_none());
    let p = nyc("highway=runway foot=yes");
    assert_eq!(
        (p.forward.bike(), p.backward.bike()),
        (BikeAccess::Push, BikeAccess::Push)
    );
}

#[test]
fn the_most_specific_access_tag_wins() {
    // bicycle > vehicle > access
    assert_eq!(fwd("highway=service access=no vehicle=yes"), (Quiet, Ride));
    assert!(classify_in("nyc", "highway=service access=yes vehicle=no foot=no").is_none());
    let p = nyc("highway=service access=yes vehicle=no");
    assert_eq!(p.forward.bike(), No);
    assert!(p.forward.foot());
    assert_eq!(fwd("highway=service vehicle=no bicycle=yes"), (Quiet, Ride));
    assert_eq!(
        fwd("highway=service access=no bicycle=dismount"),
        (Shared, Push)
    );
    // bicycle=yes opens a highway otherwise closed to bicycles; access=yes and vehicle=yes do not.
    assert_eq!(fwd("highway=bridleway bicycle=yes").1, Ride);
    // A bridleway open to walkers (`foot=yes`, or `access=yes`) is walked with the bike.
    assert_eq!(nyc("highway=bridleway access=yes").forward.bike(), Push);
    assert_eq!(nyc("highway=bridleway foot=yes").forward.bike(), Push);
    assert_eq!(nyc("highway=bridleway").forward.bike(), No);
    // An opened motorway is one-way, its link not.
    // use_sidepath closes a trunk road; elsewhere the road is rated very busy but stays ridable
    // (Chicago tags it on most streets with a separate protected lane: the few metres to a side
    // street are ridden).
    assert_eq!(
        nyc("highway=primary bicycle=use__sidepath").forward.bike(),
        Ride
    );
    assert_eq!(nyc("highway=motorway bicycle=yes").backward.bike(), No);
    assert_eq!(
        nyc("highway=motorway__link bicycle=yes").backward.bike(),
        Ride
    );
    // A cycle facility mapped on a motorway opens it (one-way; `opposite` both ways), never to walking.
    let m = nyc("highway=motorway cycleway=track");
    assert_eq!((m.forward.bike(), m.backward.bike()), (Ride, No));
    assert!(!m.forward.foot());
    assert_eq!(
        nyc("highway=motorway cycleway:left=opposite")
            .backward
            .bike(),
        Ride
    );
    assert!(
        !nyc("highway=motorway access=yes cycleway=lane")
            .backward
            .foot()
    );
    assert!(classify_in("nyc", "highway=motorway cycleway=no").is_none());
    // An unknown highway type opened by a cycle facility or an access tag is ridden as a road.
    assert_eq!(fwd("highway=runway access=yes").1, Ride);
    assert_eq!(fwd("highway=some__tag cycleway=lane").1, Ride);
    assert!(classify_in("nyc", "highway=runway").is_none());
    assert!(classify_in("nyc", "highway=construction access=yes").is_none());
    assert_eq!(fwd("highway=footway bicycle=yes").1, Ride);
    assert_eq!(fwd("highway=footway vehicle=yes").1, Push);
    assert_eq!(fwd("highway=footway footway=sidewalk bicycle=yes").1, Ride);
    assert_eq!(fwd("highway=motorway bicycle=yes"), (VeryBusy, Ride));
    assert!(!nyc("highway=motorway bicycle=yes").forward.foot());
    assert!(classify_in("nyc", "highway=motorway access=yes").is_none());
}

#[test]
fn ferries_carry_bicycles_and_are_timed() {
    let p = nyc("route=ferry");
    assert_eq!((p.forward.bike(), p.backward.bike()), (Ride, Ride));
    assert!(p.forward.foot());
    assert_ne!(p.flags & way_flags::FERRY, 0);
    assert!(classify_in("nyc", "route=ferry bicycle=no foot=no").is_none());
    assert_eq!(nyc("route=ferry bicycle=no").forward.bike(), No);
    for (v, s) in [
        ("00:20", 1200.0),
        ("1:05", 3900.0),
        ("00:20:30", 1230.0),
        ("45", 2700.0),
        ("PT1H20M", 4800.0),
    ] {
        assert_eq!(
            ferry_duration_s(&tags(&format!("duration={v}"))),
            Some(s),
            "{v}"
        );
    }
    assert_eq!(ferry_duration_s(&tags("duration=soon")), None);
    assert_eq!(ferry_duration_s(&tags("duration=0")), None);
}

#[test]
fn barriers_and_access_on_nodes() {
    assert_eq!(node_passage(&tags("barrier=wall")), Some((No, false)));
    assert_eq!(node_passage(&tags("barrier=fence")), Some((No, false)));
    assert_eq!(node_passage(&tags("barrier=gate")), None, "gates stay open");
    assert_eq!(node_passage(&tags("barrier=bollard")), None);
    assert_eq!(node_passage(&tags("barrier=cycle__barrier")), None);
    assert_eq!(node_passage(&tags("highway=traffic__signals")), None);
    assert_eq!(node_passage(&tags("barrier=stile")), Some((No, true)));
    assert_eq!(
        node_passage(&tags("barrier=gate locked=yes")),
        Some((No, false))
    );
    assert_eq!(
        node_passage(&tags("barrier=gate access=private")),
        Some((No, false))
    );
    assert_eq!(
        node_passage(&tags("barrier=gate access=private foot=yes")),
        Some((No, true))
    );
    assert_eq!(
        node_passage(&tags("barrier=gate access=no bicycle=yes")),
        Some((Ride, false))
    );
    assert_eq!(
        node_passage(&tags("barrier=bollard bicycle=no")),
        Some((No, true))
    );
    // A crossing closed to riding is walked across; another node closed to bicycles is not passed.
    assert_eq!(
        node_passage(&tags("highway=crossing bicycle=no")),
        Some((Push, true))
    );
    assert_eq!(node_passage(&tags("bicycle=no")), Some((No, true)));
    assert_eq!(
        node_passage(&tags("highway=crossing bicycle=no foot=no")),
        Some((No, false))
    );
    assert_eq!(node_passage(&tags("access=no")), Some((No, false)));
    assert_eq!(
        node_passage(&tags("barrier=gate bicycle=dismount")),
        Some((Push, true))
    );
    assert_eq!(
        node_passage(&tags("barrier=wall bicycle=yes foot=yes")),
        None
    );
}

#[test]
fn default_speeds_are_per_city() {
    // Chicago's default is 30 mph: an untagged residential street is moderate there, quiet in NYC.
    assert_eq!(
        classify_in("chicago", "highway=residential")
            .unwrap()
            .forward
            .safety_class(),
        Moderate
    );
    assert_eq!(fwd("highway=residential"), (Quiet, Ride));
    // London's 20 mph default keeps a two-way secondary street moderate, not busy.
    assert_eq!(
        classify_in("london", "highway=secondary")
            .unwrap()
            .forward
            .safety_class(),
        Moderate
    );
}
