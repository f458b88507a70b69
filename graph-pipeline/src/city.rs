//! The cities Quietway knows: time zone, lighting data, traffic side, default speeds, and the
//! boundary file whose polygons define coverage. `cities.json` is the embedded default.

use crate::rules::CityRules;
use quietway_engine::graph::CoverageArea;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
pub struct CityConfig {
    pub name: String,
    pub timezone: String,
    pub has_lighting_data: bool,
    pub drives_on_left: bool,
    /// Relative to the shared data folder; may be left out when `--boundary` is given.
    #[serde(default)]
    pub boundary: String,
    /// Sample extracts (relative to the shared data folder) used when `data/osm/` has none; a custom
    /// cities file used with `--osm` needs none.
    #[serde(default)]
    pub sample_extracts: Vec<String>,
    pub default_speed_mph: BTreeMap<String, f64>,
    /// Whether the city's law lets adults ride on sidewalks (docs/safety-rules.md cites it).
    #[serde(default)]
    pub sidewalk_riding: bool,
    /// Whether bicycles may ride trunk roads unless tagged otherwise.
    #[serde(default = "default_true")]
    pub trunk_riding: bool,
}

fn default_true() -> bool {
    true
}

impl CityConfig {
    pub fn rules(&self) -> CityRules {
        CityRules {
            drives_on_left: self.drives_on_left,
            default_speed_mph: self.default_speed_mph.clone(),
            sidewalk_riding: self.sidewalk_riding,
            trunk_riding: self.trunk_riding,
        }
    }
}

pub const EMBEDDED: &str = include_str!("../cities.json");

pub fn load_cities(path: Option<&Path>) -> Result<BTreeMap<String, CityConfig>, String> {
    let text = match path {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => EMBEDDED.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| format!("city configuration is invalid: {e}"))
}

/// Reads a boundary GeoJSON (FeatureCollection, Feature or bare geometry) into named areas,
/// simplified to about 10 m (Douglas–Peucker) to keep the graph file small.
pub fn read_boundary(path: &Path) -> Result<Vec<CoverageArea>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not valid GeoJSON ({e})", path.display()))?;
    let features: Vec<&serde_json::Value> = match json["type"].as_str() {
        Some("FeatureCollection") => json["features"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        Some("Feature") => vec![&json],
        _ => vec![&json],
    };
    let mut areas = Vec::new();
    for (i, f) in features.iter().enumerate() {
        let geometry = if f["type"] == "Feature" {
            &f["geometry"]
        } else {
            *f
        };
        let name = f["properties"]["name"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("area {}", i + 1));
        let polygons: Vec<Vec<Vec<[f64; 2]>>> = match geometry["type"].as_str() {
            Some("Polygon") => vec![parse_polygon(&geometry["coordinates"])?],
            Some("MultiPolygon") => geometry["coordinates"]
                .as_array()
                .ok_or("MultiPolygon without coordinates")?
                .iter()
                .map(parse_polygon)
                .collect::<Result<_, _>>()?,
            _ => continue,
        };
        areas.push(CoverageArea { name, polygons });
    }
    if areas.is_empty() {
        return Err(format!("{}: no polygons found", path.display()));
    }
    Ok(areas)
}

fn parse_polygon(v: &serde_json::Value) -> Result<Vec<Vec<[f64; 2]>>, String> {
    let rings = v.as_array().ok_or("polygon is not an array")?;
    rings
        .iter()
        .map(|r| {
            let pts: Vec<[f64; 2]> = r
                .as_array()
                .ok_or("ring is not an array")?
                .iter()
                .filter_map(|p| Some([p.get(0)?.as_f64()?, p.get(1)?.as_f64()?]))
                .collect();
            Ok(simplify(&pts, 1e-4))
        })
        .collect()
}

/// Douglas–Peucker in degrees (tolerance 1e-4° ≈ 10 m); keeps at least a triangle.
fn simplify(pts: &[[f64; 2]], tol: f64) -> Vec<[f64; 2]> {
    if pts.len() <= 4 {
        return pts.to_vec();
    }
    let mut keep = vec![false; pts.len()];
    keep[0] = true;
    keep[pts.len() - 1] = true;
    let mut stack = vec![(0usize, pts.len() - 1)];
    while let Some((a, b)) = stack.pop() {
        let (mut best, mut best_d) = (0, 0.0);
        for i in a + 1..b {
            let d = seg_dist(pts[i], pts[a], pts[b]);
            if d > best_d {
                best = i;
                best_d = d;
            }
        }
        if best_d > tol {
            keep[best] = true;
            stack.push((a, best));
            stack.push((best, b));
        }
    }
    let out: Vec<[f64; 2]> = pts
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| *p)
        .collect();
    if out.len() < 4 { pts.to_vec() } else { out }
}

fn seg_dist(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    };
    let (x, y) = (a[0] + t * dx - p[0], a[1] + t * dy - p[1]);
    (x * x + y * y).sqrt()
}
