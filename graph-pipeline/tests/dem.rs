//! The DEM readers on the real SRTM crops of SF North Beach / Telegraph Hill.

mod common;

use common::*;
use quietway_graph_pipeline::dem::{Dem, DemSet};

#[test]
fn geotiff_crops_give_plausible_bilinear_elevations() {
    let west = Dem::open(&shared_data().join("dem/sf-north-beach-srtm1-west.tif")).unwrap();
    let east = Dem::open(&shared_data().join("dem/sf-north-beach-srtm1-east.tif")).unwrap();
    let [min_lon, min_lat, max_lon, max_lat] = east.bounds();
    assert!(
        min_lon > -122.5 && max_lon < -122.3 && min_lat > 37.7 && max_lat < 37.9,
        "{:?}",
        east.bounds()
    );
    let set = DemSet(vec![west, east]);
    // Inside the east crop: an elevation between sea level and Telegraph Hill's summit (~90 m).
    let (lon, lat) = ((min_lon + max_lon) / 2.0, (min_lat + max_lat) / 2.0);
    let e = set.elevation(lon, lat).expect("covered");
    assert!((-5.0..120.0).contains(&e), "{e}");
    // Bilinear: halfway between two posts lies between their values.
    let d = 1.0 / 3600.0;
    let (a, b) = (
        set.elevation(lon, lat).unwrap(),
        set.elevation(lon + d, lat).unwrap(),
    );
    let mid = set.elevation(lon + d / 2.0, lat).unwrap();
    assert!(mid >= a.min(b) - 0.01 && mid <= a.max(b) + 0.01);
    assert!(set.elevation(0.0, 0.0).is_none());
}

#[test]
fn hgt_tiles_are_read_by_name() {
    let dir = std::env::temp_dir().join(format!("qw-hgt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let side = 1201usize;
    let mut bytes = Vec::with_capacity(side * side * 2);
    for row in 0..side {
        for _col in 0..side {
            // Height rises 1 m per row southwards.
            bytes.extend_from_slice(&(row as i16).to_be_bytes());
        }
    }
    let f = dir.join("N37W123.hgt");
    std::fs::write(&f, &bytes).unwrap();
    let dem = Dem::open(&f).unwrap();
    // Row 0 is the north edge (38°N), row 1200 the south edge (37°N).
    assert_eq!(dem.elevation(-122.5, 38.0), Some(0.0));
    assert_eq!(dem.elevation(-122.5, 37.0), Some(1200.0));
    let e = dem.elevation(-122.5, 37.5).unwrap();
    assert!((e - 600.0).abs() < 0.6, "{e}");
    let bad = dir.join("elevation.hgt");
    std::fs::write(&bad, &bytes).unwrap();
    assert!(Dem::open(&bad).is_err());
}
