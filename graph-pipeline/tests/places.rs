//! The place index: streets grouped, points of interest (nodes, closed ways, multipolygons) and
//! places with their alternative names, on a hand-drawn map; and on a real extract.

mod common;

use common::*;
use quietway_graph_pipeline::places::{PlaceEntry, PlaceKind, build_places, write_places};
use quietway_graph_pipeline::progress::Progress;

//   a---b---c          d---e   (Main Street in three ways; a..c touch, d..e is 2 km east)
//   f---g              h (cafe)      p (place=neighbourhood, alt_name)
//   k l m n : a closed way (park); q r s t : a multipolygon's outer way (museum)
const MAP: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6">
  <node id="1" lat="40.7000" lon="-74.0000"/>
  <node id="2" lat="40.7000" lon="-73.9990"/>
  <node id="3" lat="40.7000" lon="-73.9980"/>
  <node id="4" lat="40.7000" lon="-73.9700"/>
  <node id="5" lat="40.7000" lon="-73.9690"/>
  <node id="6" lat="40.7010" lon="-74.0000"/>
  <node id="7" lat="40.7010" lon="-73.9990"/>
  <node id="8" lat="40.7020" lon="-74.0000">
    <tag k="amenity" v="cafe"/><tag k="name" v="Bean There"/>
    <tag k="addr:housenumber" v="12"/><tag k="addr:street" v="Main Street"/>
  </node>
  <node id="9" lat="40.7030" lon="-74.0000">
    <tag k="place" v="neighbourhood"/><tag k="name" v="Little Hollow"/>
    <tag k="alt_name" v="The Hollow;LH"/><tag k="official_name" v="Little Hollow Historic District"/>
  </node>
  <node id="10" lat="40.7040" lon="-74.0000"/>
  <node id="11" lat="40.7040" lon="-73.9990"/>
  <node id="12" lat="40.7050" lon="-73.9990"/>
  <node id="13" lat="40.7050" lon="-74.0000"/>
  <node id="20" lat="40.7060" lon="-74.0000"/>
  <node id="21" lat="40.7060" lon="-73.9990"/>
  <node id="22" lat="40.7070" lon="-73.9990"/>
  <node id="23" lat="40.7070" lon="-74.0000"/>
  <node id="30" lat="40.7080" lon="-74.0000"><tag k="highway" v="bus_stop"/><tag k="name" v="Main St / 1 Av"/></node>
  <way id="100"><nd ref="1"/><nd ref="2"/><tag k="highway" v="residential"/><tag k="name" v="Main Street"/></way>
  <way id="101"><nd ref="2"/><nd ref="3"/><tag k="highway" v="residential"/><tag k="name" v="Main Street"/><tag k="alt_name" v="Old Post Road"/></way>
  <way id="102"><nd ref="4"/><nd ref="5"/><tag k="highway" v="residential"/><tag k="name" v="Main Street"/></way>
  <way id="103"><nd ref="6"/><nd ref="7"/><tag k="highway" v="cycleway"/><tag k="name" v="River Greenway"/></way>
  <way id="104"><nd ref="6"/><nd ref="1"/><tag k="highway" v="footway"/></way>
  <way id="110"><nd ref="10"/><nd ref="11"/><nd ref="12"/><nd ref="13"/><nd ref="10"/>
    <tag k="leisure" v="park"/><tag k="name" v="Hollow Park"/><tag k="wikidata" v="Q1"/></way>
  <way id="120"><nd ref="20"/><nd ref="21"/><nd ref="22"/><nd ref="23"/><nd ref="20"/></way>
  <relation id="200">
    <member type="way" ref="120" role="outer"/>
    <tag k="type" v="multipolygon"/><tag k="tourism" v="museum"/><tag k="name" v="Museum of Maps"/>
  </relation>
</osm>
"#;

#[test]
fn hand_drawn_map() {
    let dir = std::env::temp_dir().join(format!("qw-places-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let osm = dir.join("map.osm");
    std::fs::write(&osm, MAP).unwrap();
    let entries = build_places(
        std::slice::from_ref(&osm),
        "Testville",
        &[],
        &Progress::new(true),
    )
    .unwrap();
    let find =
        |name: &str| -> Vec<&PlaceEntry> { entries.iter().filter(|e| e.name == name).collect() };

    // Main Street: the two touching ways are one street (named by its longest way, the first of
    // equal length), the piece 2 km east another; alternative names of any piece are kept.
    let main = find("Main Street");
    assert_eq!(main.len(), 2, "{main:?}");
    assert!(main.iter().all(|e| e.kind == PlaceKind::Street));
    let west = main.iter().find(|e| e.id == "w100").expect("w100");
    assert_eq!(west.alt_names, vec!["Old Post Road"]);
    assert_eq!(west.category, "highway=residential");
    assert!(main.iter().any(|e| e.id == "w102"));

    let cafe = find("Bean There")[0];
    assert_eq!(
        (cafe.kind, cafe.id.as_str(), cafe.category.as_str()),
        (PlaceKind::Poi, "n8", "amenity=cafe")
    );
    assert_eq!(cafe.address.as_deref(), Some("12 Main Street"));
    assert_eq!(cafe.district.as_deref(), Some("Little Hollow"));
    // Outside every coverage area (none given) and without addr:city: no locality.
    assert_eq!(cafe.locality, None);

    let hollow = find("Little Hollow")[0];
    assert_eq!(hollow.kind, PlaceKind::Place);
    assert_eq!(
        hollow.alt_names,
        vec!["The Hollow", "LH", "Little Hollow Historic District"]
    );

    let park = find("Hollow Park")[0];
    assert_eq!((park.kind, park.id.as_str()), (PlaceKind::Poi, "w110"));
    assert!((park.lat - 40.7044).abs() < 1e-3 && (park.lon + 73.9996).abs() < 1e-3);
    assert!(
        park.importance > cafe.importance,
        "a Wikidata park outranks a café"
    );

    let museum = find("Museum of Maps")[0];
    assert_eq!(
        (museum.id.as_str(), museum.category.as_str()),
        ("r200", "tourism=museum")
    );
    assert!((museum.lat - 40.7064).abs() < 1e-3);

    assert_eq!(find("River Greenway")[0].kind, PlaceKind::Street);
    // Bus stops are not places a rider looks for by name; unnamed ways are nothing.
    assert!(find("Main St / 1 Av").is_empty());
    assert_eq!(entries.len(), 7, "{entries:#?}");

    // The file: a header, then one entry per line.
    let out = dir.join("testville.places.ndjson");
    write_places(&out, "testville", "Testville", &entries).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["format"], "quietway-places");
    assert_eq!(header["count"], 7);
    assert_eq!(lines.count(), 7);
}

#[test]
fn real_extract_has_the_streets_and_places_riders_search_for() {
    let osm = shared_data().join("osm/nyc-soho-tiny.osm.pbf");
    let areas = quietway_graph_pipeline::city::read_boundary(
        &shared_data().join("boundaries/nyc-boroughs.geojson"),
    )
    .unwrap();
    let entries = build_places(&[osm], "New York City", &areas, &Progress::new(true)).unwrap();
    let streets: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == PlaceKind::Street)
        .collect();
    assert!(streets.len() >= 5, "{streets:?}");
    // One entry per street name here: the few blocks hold one piece of each street.
    let mut names: Vec<&str> = streets.iter().map(|e| e.name.as_str()).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "{names:?}");
    assert!(
        streets
            .iter()
            .all(|e| e.locality.as_deref() == Some("New York City"))
    );
}
