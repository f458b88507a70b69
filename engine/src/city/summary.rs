//! A planned leg's geometry and totals (distance, duration, climb).

use super::*;

/// Totals and shape of a leg for a profile.
#[derive(Clone, Debug, Default)]
pub struct LegSummary {
    pub distance_m: f64,
    pub duration_s: f64,
    pub elevation_gain_m: f64,
    pub elevation_loss_m: f64,
    pub geometry: Vec<[f64; 2]>,
}

impl City {
    /// The travelled part of one arc, as a polyline, appended to `out` (a position equal to the
    /// one before it is not repeated).
    pub fn piece_geometry(&self, p: &ArcPiece, out: &mut Vec<[f64; 2]>) {
        self.append_piece_geometry(p, &mut Vec::new(), out, 0);
    }

    /// [`Self::piece_geometry`] with a reusable buffer; positions before `own` in `out` belong to
    /// something else and are not compared with.
    pub(crate) fn append_piece_geometry(
        &self,
        p: &ArcPiece,
        pts: &mut Vec<[f64; 2]>,
        out: &mut Vec<[f64; 2]>,
        own: usize,
    ) {
        let push = |q: [f64; 2], out: &mut Vec<[f64; 2]>| {
            if out.len() == own || out.last() != Some(&q) {
                out.push(q);
            }
        };
        pts.clear();
        self.graph.arc_geometry(p.arc, pts);
        if p.from <= 0.0 && p.to >= 1.0 {
            // A whole arc: its shape as it is (no lengths needed to cut it).
            for &q in pts.iter() {
                push(q, out);
            }
            return;
        }
        let seg: Vec<f64> = pts
            .windows(2)
            .map(|w| {
                crate::geo::haversine_m(
                    crate::geo::LonLat::new(w[0][0], w[0][1]),
                    crate::geo::LonLat::new(w[1][0], w[1][1]),
                )
            })
            .collect();
        let total: f64 = seg.iter().sum();
        let (from, to) = (p.from * total, p.to * total);
        let at = |d: f64| -> [f64; 2] {
            let mut acc = 0.0;
            for (i, &l) in seg.iter().enumerate() {
                if acc + l >= d || i + 1 == seg.len() {
                    let u = if l > 0.0 {
                        ((d - acc) / l).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    return [
                        pts[i][0] + u * (pts[i + 1][0] - pts[i][0]),
                        pts[i][1] + u * (pts[i + 1][1] - pts[i][1]),
                    ];
                }
                acc += l;
            }
            pts[pts.len() - 1]
        };
        push(at(from), out);
        let mut acc = 0.0;
        for (i, &l) in seg.iter().enumerate() {
            acc += l;
            if acc > from && acc < to && i + 1 < pts.len() - 1 {
                push(pts[i + 1], out);
            }
        }
        push(at(to), out);
    }

    /// Distance, duration (cycling at 15 km/h or e-bike 22 km/h, pushing and walking at 5 km/h),
    /// elevation gain and loss, and geometry of a leg.
    pub fn summarize_leg(&self, leg: &Leg, profile: Profile, ebike: bool) -> LegSummary {
        let model = self.model();
        let elevation = self.graph.city.as_ref().is_some_and(|c| c.elevation_known);
        let mut s = LegSummary::default();
        for p in &leg.pieces {
            let frac = p.to - p.from;
            s.distance_m += self.graph.arc_length_m(p.arc) as f64 * frac;
            s.duration_s +=
                model.duration_s(&self.graph, p.arc, profile == Profile::Cycling, ebike) * frac;
            if elevation {
                s.elevation_gain_m += self.graph.arc_climb_m(p.arc) as f64 * frac;
                s.elevation_loss_m += self.graph.arc_descent_m(p.arc) as f64 * frac;
            }
            self.piece_geometry(p, &mut s.geometry);
        }
        if s.geometry.len() == 1 {
            let only = s.geometry[0];
            s.geometry.push(only);
        }
        s
    }

    /// Directed arcs of an OSM way (avoidances and reports name ways).
    pub fn arcs_of_way(&self, way_osm_id: i64) -> Vec<ArcId> {
        let (first, arcs) = &self.way_arcs;
        match self.graph.way_osm_id.binary_search(&way_osm_id) {
            Ok(w) => arcs[first[w] as usize..first[w + 1] as usize].to_vec(),
            Err(_) => Vec::new(),
        }
    }
}
