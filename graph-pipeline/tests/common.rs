//! Helpers shared by the pipeline's integration tests.
#![allow(dead_code)]

use quietway_engine::graph::{ArcAttrs, CityGraph};
use quietway_graph_pipeline::build::{BuildInput, BuildReport, build};
use quietway_graph_pipeline::city::{load_cities, read_boundary};
use quietway_graph_pipeline::progress::Progress;
use std::path::PathBuf;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn shared_data() -> PathBuf {
    repo_root().join("../shared/data")
}

pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("test/fixtures").join(name)
}

pub fn build_city(
    city: &str,
    files: &[PathBuf],
    min_island: usize,
) -> Result<(CityGraph, BuildReport), String> {
    let cities = load_cities(None).unwrap();
    let cfg = cities[city].clone();
    let areas = read_boundary(&shared_data().join(&cfg.boundary)).unwrap();
    let input = BuildInput {
        city_id: city.to_string(),
        city: cfg,
        osm: files.to_vec(),
        dem: None,
        areas,
        sources: vec![],
        min_component_nodes: min_island,
    };
    build(&input, &Progress::new(true))
}

/// All arcs of an OSM way, with their tail and head OSM node ids.
pub fn arcs_of_way(g: &CityGraph, way_osm_id: i64) -> Vec<(u32, i64, i64, ArcAttrs)> {
    let Some(w) = g.way_osm_id.iter().position(|&id| id == way_osm_id) else {
        return vec![];
    };
    (0..g.arc_count() as u32)
        .filter(|&a| g.arc_way(a) == w as u32)
        .map(|a| {
            (
                a,
                g.node_osm_id[g.arc_tail(a) as usize],
                g.node_osm_id[g.arc_head(a) as usize],
                g.arc_attrs[a as usize],
            )
        })
        .collect()
}

/// The arc of a way from one OSM node to another (original arcs only, not restriction clones).
pub fn arc(g: &CityGraph, way: i64, from: i64, to: i64) -> (u32, ArcAttrs) {
    arcs_of_way(g, way)
        .into_iter()
        .find(|(_, t, h, a)| *t == from && *h == to && !a.restriction_clone())
        .map(|(a, _, _, attrs)| (a, attrs))
        .unwrap_or_else(|| panic!("no arc {from}→{to} on way {way}"))
}

/// Every shared OSM extract with the city it belongs to.
pub fn shared_extracts() -> Vec<(String, PathBuf)> {
    let dir = shared_data().join("osm");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.extend(
        std::fs::read_dir(dir.join("london-xml"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    files.retain(|p| p.is_file());
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let s = f.to_string_lossy();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let city = if name.starts_with("nyc-") {
                "nyc"
            } else if name.starts_with("chicago-") {
                "chicago"
            } else if s.contains("london") {
                "london"
            } else if name.starts_with("la-") {
                "los-angeles"
            } else if name.contains("oakland") {
                "sf-bay-area"
            } else {
                panic!(
                    "shared extract {s} belongs to no known city: teach shared_extracts() its city"
                )
            };
            (city.to_string(), f)
        })
        .collect()
}
