//! Names for unnamed sidewalks. A sidewalk mapped as a way of its own (`footway=sidewalk`) rarely
//! carries a name, so a walk along one read "Turn left" and then nothing for 500 m. Each takes the
//! name of the street it runs beside: the named street whose segment lies nearest each of its
//! segments (within [`NEAR_M`], running within [`PARALLEL_DEG`] of it), weighted by length, when
//! that street covers at least half of the sidewalk. Corner pieces and sidewalks beside nothing
//! named keep no name.

use quietway_engine::geo::LonLat;
use std::collections::HashMap;

/// How far from a street a sidewalk's segment may lie (its middle, to the street's centre line).
pub const NEAR_M: f64 = 25.0;
/// How far a sidewalk's segment may turn from the street's.
pub const PARALLEL_DEG: f64 = 30.0;
/// Grid cells of the street index, in degrees (about 40–55 m).
const CELL_DEG: f64 = 0.0005;

/// Metres per degree of latitude, and of longitude at the equator.
const M_PER_DEG: f64 = 111_320.0;

/// For each sidewalk (its points in order), the name of the street beside it, if one is.
pub fn street_names_beside(
    streets: &[(Vec<LonLat>, &str)],
    sidewalks: &[Vec<LonLat>],
) -> Vec<Option<String>> {
    let cell = |p: LonLat| {
        (
            (p.lon / CELL_DEG).floor() as i64,
            (p.lat / CELL_DEG).floor() as i64,
        )
    };
    // Street segments by the grid cells their bounding boxes touch.
    let mut segments: Vec<(LonLat, LonLat, usize)> = Vec::new();
    let mut grid: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    for (i, (points, name)) in streets.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        for pair in points.windows(2) {
            let id = segments.len() as u32;
            segments.push((pair[0], pair[1], i));
            let (lo, hi) = (
                cell(LonLat::new(
                    pair[0].lon.min(pair[1].lon),
                    pair[0].lat.min(pair[1].lat),
                )),
                cell(LonLat::new(
                    pair[0].lon.max(pair[1].lon),
                    pair[0].lat.max(pair[1].lat),
                )),
            );
            for x in lo.0..=hi.0 {
                for y in lo.1..=hi.1 {
                    grid.entry((x, y)).or_default().push(id);
                }
            }
        }
    }
    use rayon::prelude::*;
    sidewalks
        .par_iter()
        .map(|points| {
            let mut votes: HashMap<&str, f64> = HashMap::new();
            let mut total = 0.0;
            for pair in points.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                let mid = LonLat::new((a.lon + b.lon) / 2.0, (a.lat + b.lat) / 2.0);
                let local = Local::at(mid);
                let (ax, ay) = local.xy(a);
                let (bx, by) = local.xy(b);
                let len = (bx - ax).hypot(by - ay);
                total += len;
                if len < 0.5 {
                    continue;
                }
                let heading = (by - ay).atan2(bx - ax);
                let c = cell(mid);
                let mut best: Option<(f64, usize)> = None;
                for x in c.0 - 1..=c.0 + 1 {
                    for y in c.1 - 1..=c.1 + 1 {
                        for &id in grid.get(&(x, y)).map(|v| v.as_slice()).unwrap_or(&[]) {
                            let (p, q, street) = segments[id as usize];
                            let (px, py) = local.xy(p);
                            let (qx, qy) = local.xy(q);
                            if (qx - px).hypot(qy - py) < 0.5
                                || !parallel(heading, (qy - py).atan2(qx - px))
                            {
                                continue;
                            }
                            let d = distance_to_segment((0.0, 0.0), (px, py), (qx, qy));
                            if d <= NEAR_M && best.is_none_or(|(bd, _)| d < bd) {
                                best = Some((d, street));
                            }
                        }
                    }
                }
                if let Some((_, street)) = best {
                    *votes.entry(streets[street].1).or_default() += len;
                }
            }
            votes
                .into_iter()
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(a.0)))
                .filter(|&(_, m)| total > 0.0 && m >= total / 2.0)
                .map(|(name, _)| name.to_string())
        })
        .collect()
}

/// Whether two headings (radians) run the same way or opposite ways, within [`PARALLEL_DEG`].
fn parallel(a: f64, b: f64) -> bool {
    let d = (a - b).to_degrees().rem_euclid(180.0);
    d.min(180.0 - d) <= PARALLEL_DEG
}

/// Metres east and north of a point, flat over the few metres compared.
struct Local {
    origin: LonLat,
    m_per_lon: f64,
}

impl Local {
    fn at(origin: LonLat) -> Local {
        Local {
            origin,
            m_per_lon: M_PER_DEG * origin.lat.to_radians().cos(),
        }
    }

    fn xy(&self, p: LonLat) -> (f64, f64) {
        (
            (p.lon - self.origin.lon) * self.m_per_lon,
            (p.lat - self.origin.lat) * M_PER_DEG,
        )
    }
}

fn distance_to_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let t = (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
    (p.0 - a.0 - t * dx).hypot(p.1 - a.1 - t * dy)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point `east` and `north` metres from (-73.99, 40.75).
    fn at(east: f64, north: f64) -> LonLat {
        let o = LonLat::new(-73.99, 40.75);
        LonLat::new(
            o.lon + east / (M_PER_DEG * o.lat.to_radians().cos()),
            o.lat + north / M_PER_DEG,
        )
    }

    #[test]
    fn a_sidewalk_takes_the_name_of_the_street_it_runs_beside() {
        let streets = [
            (vec![at(0.0, 0.0), at(200.0, 0.0)], "West 34th Street"),
            (vec![at(100.0, -100.0), at(100.0, 100.0)], "Broadway"),
            (vec![at(0.0, 60.0), at(200.0, 60.0)], ""),
        ];
        let sidewalks = [
            // Along 34th Street, 8 m north of it, crossing Broadway's line.
            vec![at(10.0, 8.0), at(90.0, 8.0), at(190.0, 8.0)],
            // Along Broadway, 7 m west, ending at 34th Street.
            vec![at(93.0, 95.0), at(93.0, 12.0)],
            // Beside the unnamed street only.
            vec![at(10.0, 66.0), at(60.0, 66.0)],
            // Across 34th Street: a crossing, not a sidewalk beside it.
            vec![at(150.0, -10.0), at(150.0, 10.0)],
            // 40 m from any street.
            vec![at(10.0, -40.0), at(80.0, -40.0)],
        ];
        assert_eq!(
            street_names_beside(&streets, &sidewalks),
            [
                Some("West 34th Street".to_string()),
                Some("Broadway".to_string()),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn a_corner_piece_goes_to_the_street_it_mostly_follows() {
        let streets = [
            (vec![at(0.0, 0.0), at(200.0, 0.0)], "Main Street"),
            (vec![at(0.0, 0.0), at(0.0, 200.0)], "First Avenue"),
        ];
        // 60 m along Main Street, then 20 m round the corner up First Avenue.
        let sidewalks = [vec![at(70.0, 8.0), at(8.0, 8.0), at(8.0, 28.0)]];
        assert_eq!(
            street_names_beside(&streets, &sidewalks),
            [Some("Main Street".to_string())]
        );
    }
}
