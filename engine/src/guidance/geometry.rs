//! Headings and turn angles at street scale: the leg's shape as one polyline measured in metres, and
//! headings read over [`HEADING_SPAN_M`] of road on either side of a junction, not from the last tiny
//! segment (a kerb ramp, a node a metre before the junction, a bend in the curb line would otherwise
//! decide the turn).

use crate::geo::EARTH_RADIUS_M;

/// Road over which a heading is read, either side of a junction (OSRM looks 10–20 m ahead).
pub const HEADING_SPAN_M: f64 = 15.0;

/// Signed turn in degrees, (-180, 180], positive to the right.
pub fn turn_angle(before: f64, after: f64) -> f64 {
    let mut d = (after - before) % 360.0;
    if d > 180.0 {
        d -= 360.0;
    } else if d <= -180.0 {
        d += 360.0;
    }
    d
}

/// The modifier of a turn onto another road (a real U-turn is named by the caller, never by the
/// angle alone): `straight` up to 20°, `slight` to 50°, a plain turn to 125°, `sharp` beyond, up to
/// 180° (a turn that doubles back onto another road is a sharp turn, not a U-turn).
pub fn modifier(before: f64, after: f64) -> &'static str {
    modifier_of_angle(turn_angle(before, after))
}

/// [`modifier`] of a signed turn angle.
pub fn modifier_of_angle(d: f64) -> &'static str {
    let a = d.abs();
    let side = |l: &'static str, r: &'static str| if d < 0.0 { l } else { r };
    if a <= 20.0 {
        "straight"
    } else if a <= 40.0 {
        side("slight left", "slight right")
    } else if a <= 120.0 {
        side("left", "right")
    } else {
        side("sharp left", "sharp right")
    }
}

/// Headings and lengths in a local equirectangular plane (one cosine per leg, no trigonometry per
/// segment); within a city this differs from the great-circle initial bearing by far less than the
/// degree the API rounds bearings to.
#[derive(Clone, Copy)]
pub struct Plane {
    /// Metres per degree of longitude and of latitude.
    mx: f64,
    my: f64,
}

impl Plane {
    pub fn at(lat: f64) -> Plane {
        let my = EARTH_RADIUS_M * std::f64::consts::PI / 180.0;
        Plane {
            mx: my * lat.to_radians().cos(),
            my,
        }
    }

    /// Metres east and north from `a` to `b`.
    pub(crate) fn delta(self, a: [f64; 2], b: [f64; 2]) -> (f64, f64) {
        ((b[0] - a[0]) * self.mx, (b[1] - a[1]) * self.my)
    }

    pub fn distance(self, a: [f64; 2], b: [f64; 2]) -> f64 {
        let (dx, dy) = self.delta(a, b);
        (dx * dx + dy * dy).sqrt()
    }

    /// Heading from `a` to `b`, degrees [0, 360).
    pub fn bearing(self, a: [f64; 2], b: [f64; 2]) -> f64 {
        let (dx, dy) = self.delta(a, b);
        let deg = dx.atan2(dy).to_degrees();
        if deg < 0.0 { deg + 360.0 } else { deg }
    }

    /// Heading of a polyline's start, read over [`HEADING_SPAN_M`] of it (0 when it has no length).
    pub fn start_bearing(self, pts: &[[f64; 2]]) -> f64 {
        self.bearing_over(pts.iter().copied())
    }

    /// Heading of a polyline's end, read over its last [`HEADING_SPAN_M`] (0 when it has no length).
    pub fn end_bearing(self, pts: &[[f64; 2]]) -> f64 {
        let back = self.bearing_over(pts.iter().rev().copied());
        (back + 180.0) % 360.0
    }

    /// Heading from the first position to the one [`HEADING_SPAN_M`] along (or the last one).
    fn bearing_over(self, mut pts: impl Iterator<Item = [f64; 2]>) -> f64 {
        let Some(a) = pts.next() else { return 0.0 };
        let far = self.point_along(a, pts, HEADING_SPAN_M);
        if far == a { 0.0 } else { self.bearing(a, far) }
    }

    /// The point `d` metres along a polyline that starts at `a` and goes on through `rest` (its
    /// last position when it is shorter).
    pub fn point_along(
        self,
        a: [f64; 2],
        rest: impl Iterator<Item = [f64; 2]>,
        d: f64,
    ) -> [f64; 2] {
        let (mut walked, mut prev) = (0.0, a);
        for p in rest {
            let l = self.distance(prev, p);
            if walked + l >= d && l > 0.0 {
                let u = (d - walked) / l;
                return [
                    prev[0] + u * (p[0] - prev[0]),
                    prev[1] + u * (p[1] - prev[1]),
                ];
            }
            walked += l;
            prev = p;
        }
        prev
    }
}

/// A leg's whole shape as one polyline with the distance along it at each position, so a heading
/// can be read over the same span of road whatever the pieces' lengths.
pub struct Line {
    pub plane: Plane,
    pub pts: Vec<[f64; 2]>,
    /// Metres from the start, per position.
    pub at: Vec<f64>,
}

impl Line {
    pub fn new(plane: Plane, pts: Vec<[f64; 2]>) -> Line {
        let mut at = Vec::with_capacity(pts.len());
        let mut d = 0.0;
        for (i, &p) in pts.iter().enumerate() {
            if i > 0 {
                d += plane.distance(pts[i - 1], p);
            }
            at.push(d);
        }
        Line { plane, pts, at }
    }

    pub fn length(&self) -> f64 {
        self.at.last().copied().unwrap_or(0.0)
    }

    /// Heading arriving at position `i`, read over the road before it (0 without any).
    pub fn heading_into(&self, i: usize) -> f64 {
        let d = self.at[i] - HEADING_SPAN_M;
        // Walk back to the segment holding the point `HEADING_SPAN_M` before (a few positions).
        let mut k = i;
        while k > 0 && self.at[k - 1] > d {
            k -= 1;
        }
        if k == 0 {
            return self.heading(self.pts[0], self.pts[i]);
        }
        self.heading(self.between(k - 1, k, d), self.pts[i])
    }

    /// Heading leaving position `i`, read over the road after it (0 without any).
    pub fn heading_out_of(&self, i: usize) -> f64 {
        let d = self.at[i] + HEADING_SPAN_M;
        let last = self.pts.len() - 1;
        let mut k = i;
        while k < last && self.at[k + 1] < d {
            k += 1;
        }
        if k == last {
            return self.heading(self.pts[i], self.pts[last]);
        }
        self.heading(self.pts[i], self.between(k, k + 1, d))
    }

    /// The point `d` metres along, between positions `a` and `a + 1`.
    fn between(&self, a: usize, b: usize, d: f64) -> [f64; 2] {
        let l = self.at[b] - self.at[a];
        let u = if l > 0.0 {
            ((d - self.at[a]) / l).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let (p, q) = (self.pts[a], self.pts[b]);
        [p[0] + u * (q[0] - p[0]), p[1] + u * (q[1] - p[1])]
    }

    fn heading(&self, from: [f64; 2], to: [f64; 2]) -> f64 {
        if self.plane.distance(from, to) < 0.5 {
            return 0.0;
        }
        self.plane.bearing(from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_follow_the_turn_angle() {
        assert_eq!(modifier(0.0, 5.0), "straight");
        assert_eq!(modifier(350.0, 10.0), "straight");
        assert_eq!(modifier(0.0, 90.0), "right");
        assert_eq!(modifier(90.0, 0.0), "left");
        assert_eq!(modifier(0.0, 40.0), "slight right");
        assert_eq!(modifier(0.0, 220.0), "sharp left");
        // Sharper than 165° onto another road is still a sharp turn; only a real U-turn says so.
        assert_eq!(modifier(10.0, 185.0), "sharp right");
        assert_eq!(modifier(10.0, 195.0), "sharp left");
        assert!((turn_angle(350.0, 10.0) - 20.0).abs() < 1e-9);
        assert!((turn_angle(10.0, 350.0) + 20.0).abs() < 1e-9);
    }

    #[test]
    fn headings_are_read_over_fifteen_metres_not_the_last_segment() {
        let plane = Plane::at(0.0);
        let m = 1.0 / 111_195.0; // about a metre of latitude (and of longitude at the equator)
        // 30 m north, then a 1 m jog east just before the end.
        let pts = [[0.0, 0.0], [0.0, 30.0 * m], [1.0 * m, 31.0 * m]];
        let end = plane.end_bearing(&pts);
        assert!(!(5.0..=355.0).contains(&end), "end bearing {end}");
        let start = plane.start_bearing(&[[0.0, 0.0], [1.0 * m, 0.2 * m], [1.0 * m, 20.0 * m]]);
        assert!(start < 10.0, "start bearing {start}");
        let line = Line::new(plane, pts.to_vec());
        assert!((line.length() - 31.4).abs() < 0.2);
        let into = line.heading_into(1);
        assert!(!(1.0..=359.0).contains(&into), "{into}");
        assert_eq!(line.heading_out_of(2), 0.0);
        let out = line.heading_out_of(1);
        assert!((out - 45.0).abs() < 1.0, "{out}");
    }
}
