//! Small geodesy helpers shared by the pipeline, snapping and guidance.

/// Mean Earth radius in metres (IUGG), the value OSRM and most routers use.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// A position in degrees, GeoJSON order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LonLat {
    pub lon: f64,
    pub lat: f64,
}

impl LonLat {
    pub const fn new(lon: f64, lat: f64) -> Self {
        Self { lon, lat }
    }
}

/// Great-circle distance in metres.
pub fn haversine_m(a: LonLat, b: LonLat) -> f64 {
    let (la1, la2) = (a.lat.to_radians(), b.lat.to_radians());
    let dlat = la2 - la1;
    let dlon = (b.lon - a.lon).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// Initial bearing from `a` to `b` in degrees, [0, 360).
pub fn bearing_deg(a: LonLat, b: LonLat) -> f64 {
    let (la1, la2) = (a.lat.to_radians(), b.lat.to_radians());
    let dlon = (b.lon - a.lon).to_radians();
    let y = dlon.sin() * la2.cos();
    let x = la1.cos() * la2.sin() - la1.sin() * la2.cos() * dlon.cos();
    let deg = y.atan2(x).to_degrees();
    (deg + 360.0) % 360.0
}

/// Whether a point lies in a GeoJSON MultiPolygon (polygons → rings → [lon, lat]); even–odd rule
/// over each polygon's rings, so holes are honoured.
pub fn multipolygon_contains(polygons: &[Vec<Vec<[f64; 2]>>], lon: f64, lat: f64) -> bool {
    polygons.iter().any(|poly| {
        let mut inside = false;
        for ring in poly {
            let n = ring.len();
            if n < 3 {
                continue;
            }
            let mut j = n - 1;
            for i in 0..n {
                let (xi, yi) = (ring[i][0], ring[i][1]);
                let (xj, yj) = (ring[j][0], ring[j][1]);
                if (yi > lat) != (yj > lat) && lon < (xj - xi) * (lat - yi) / (yj - yi) + xi {
                    inside = !inside;
                }
                j = i;
            }
        }
        inside
    })
}

/// The sun's altitude above the horizon in degrees at a place and a time (seconds since 1970 UTC),
/// by the low-precision formulas of the Astronomical Almanac (within about a degree this century):
/// enough to tell day from night at load time.
pub fn sun_altitude_deg(lon: f64, lat: f64, unix_s: f64) -> f64 {
    // Days since J2000.0 (2000-01-01 12:00 UTC).
    let d = (unix_s - 946_728_000.0) / 86_400.0;
    let g = (357.529 + 0.985_600_28 * d).to_radians();
    let q = 280.459 + 0.985_647_36 * d;
    let l = (q + 1.915 * g.sin() + 0.020 * (2.0 * g).sin()).to_radians();
    let e = (23.439 - 0.000_000_36 * d).to_radians();
    let ra = (e.cos() * l.sin()).atan2(l.cos());
    let dec = (e.sin() * l.sin()).asin();
    let gmst_deg = (280.460_618_37 + 360.985_647_366_29 * d).rem_euclid(360.0);
    let hour_angle = (gmst_deg + lon).to_radians() - ra;
    let lat = lat.to_radians();
    (lat.sin() * dec.sin() + lat.cos() * dec.cos() * hour_angle.cos())
        .asin()
        .to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sun_is_up_at_noon_and_down_at_night() {
        // New York, 1 December 2026: about 28° at noon (12:00 EST), far below at 21:00 EST.
        let noon = sun_altitude_deg(-74.0, 40.7, 1_796_144_400.0);
        assert!((noon - 27.6).abs() < 1.5, "{noon}");
        assert!(sun_altitude_deg(-74.0, 40.7, 1_796_176_800.0) < -30.0);
        // The equator at noon on the June solstice: 90° less the sun's declination, 23.4°.
        let solstice = sun_altitude_deg(0.0, 0.0, 1_782_043_200.0);
        assert!((solstice - 66.6).abs() < 1.0, "{solstice}");
    }

    #[test]
    fn haversine_matches_a_known_distance() {
        // Union Square to Washington Square Park, Manhattan: about 0.82 km as the crow flies.
        let union_sq = LonLat::new(-73.9903, 40.7359);
        let washington_sq = LonLat::new(-73.9973, 40.7308);
        let d = haversine_m(union_sq, washington_sq);
        assert!((d - 820.0).abs() < 30.0, "{d}");
        assert_eq!(haversine_m(union_sq, union_sq), 0.0);
    }

    #[test]
    fn point_in_polygon_honours_holes() {
        let square = vec![
            vec![[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0], [0.0, 0.0]],
            vec![[1.0, 1.0], [2.0, 1.0], [2.0, 2.0], [1.0, 2.0], [1.0, 1.0]],
        ];
        let mp = vec![square];
        assert!(multipolygon_contains(&mp, 3.0, 3.0));
        assert!(!multipolygon_contains(&mp, 1.5, 1.5));
        assert!(!multipolygon_contains(&mp, 5.0, 1.0));
    }

    #[test]
    fn bearings_point_the_right_way() {
        let o = LonLat::new(0.0, 0.0);
        assert!((bearing_deg(o, LonLat::new(0.0, 1.0)) - 0.0).abs() < 1e-9);
        assert!((bearing_deg(o, LonLat::new(1.0, 0.0)) - 90.0).abs() < 1e-9);
        assert!((bearing_deg(o, LonLat::new(0.0, -1.0)) - 180.0).abs() < 1e-9);
        assert!((bearing_deg(o, LonLat::new(-1.0, 0.0)) - 270.0).abs() < 1e-9);
    }
}
