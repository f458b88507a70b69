//! A planned route in the directions v2 shape: the route, its guidance worded, and the `route`
//! object written as JSON (the bulk of a directions response), with what a server puts beside it.

use crate::city::{City, Route, RouteError, RouteRequest};
use crate::guidance::words::{
    WordedLeg, route_json, route_size_hint, write_route, write_waypoints,
};
use crate::guidance::{Step, Stop};
use crate::snap::Snap;

/// A snapped waypoint as the API shows it.
#[derive(Clone, Debug)]
pub struct DirectionsWaypoint {
    /// `[lon, lat]` rounded to 6 decimals.
    pub location: [f64; 2],
    /// Metres between the requested and the snapped position.
    pub distance_m: f64,
    /// The name of the road snapped to.
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct Directions {
    /// The v2 `route` object, serialized.
    pub route_json: String,
    /// The route's geometry, flat `[lon, lat, …]` (for disruptions near it).
    pub geometry: Vec<f64>,
    /// The directed arcs travelled.
    pub arc_ids: Vec<u32>,
    pub waypoints: Vec<DirectionsWaypoint>,
    /// The metric used (`supersafe_day`, …).
    pub metric: &'static str,
}

/// A leg's guidance: steps, stops and the leg's shape (from the steps).
type Guided = (Vec<Step>, Vec<Stop>, Vec<[f64; 2]>);

fn worded(guided: &[Guided]) -> Vec<WordedLeg<'_>> {
    guided
        .iter()
        .map(|(steps, stops, geometry)| WordedLeg {
            steps,
            stops,
            distance_m: steps.iter().map(|s| s.distance_m).sum(),
            duration_s: steps.iter().map(|s| s.duration_s).sum(),
            elevation_gain_m: steps.iter().map(|s| s.gain_m).sum(),
            elevation_loss_m: steps.iter().map(|s| s.loss_m).sum(),
            geometry,
        })
        .collect()
}

/// A snapped waypoint's position as the API gives it (to 1e-6°).
fn location(w: &Snap) -> [f64; 2] {
    [(w.lon * 1e6).round() / 1e6, (w.lat * 1e6).round() / 1e6]
}

impl City {
    /// Plans a route and guides each leg; `Ok(None)` when no route exists.
    fn guided(
        &self,
        req: &RouteRequest,
        ebike: bool,
    ) -> Result<Option<(Route, Vec<Guided>)>, RouteError> {
        let Some(route) = self.route(req)? else {
            return Ok(None);
        };
        // Leg totals and shapes come from the steps: guidance already measured every piece.
        let mut guided = Vec::with_capacity(route.legs.len());
        for (i, leg) in route.legs.iter().enumerate() {
            let w = &route.waypoints[i];
            let (steps, stops) = self.guidance(leg, [w.lon, w.lat], req.profile, ebike);
            let mut geometry: Vec<[f64; 2]> =
                Vec::with_capacity(steps.iter().map(|s| s.geometry.len()).sum());
            for st in &steps {
                for &q in &st.geometry {
                    if geometry.last() != Some(&q) {
                        geometry.push(q);
                    }
                }
            }
            guided.push((steps, stops, geometry));
        }
        Ok(Some((route, guided)))
    }

    fn waypoint_name(&self, w: &Snap) -> &str {
        let g = &self.graph;
        g.string(g.way_name[g.edge_way[w.edge as usize] as usize])
    }

    /// Plans a route and words it; `Ok(None)` when no route exists.
    pub fn directions(
        &self,
        req: &RouteRequest,
        ebike: bool,
    ) -> Result<Option<Directions>, RouteError> {
        let Some((route, guided)) = self.guided(req, ebike)? else {
            return Ok(None);
        };
        let route_json = route_json(&worded(&guided), req.profile);
        let geometry: Vec<f64> = guided
            .iter()
            .flat_map(|(_, _, g)| g.iter().flatten().copied())
            .collect();
        let arc_ids = route
            .legs
            .iter()
            .flat_map(|l| l.pieces.iter().map(|p| p.arc))
            .collect();
        let waypoints = route
            .waypoints
            .iter()
            .map(|w| DirectionsWaypoint {
                location: location(w),
                distance_m: w.distance_m,
                name: self.waypoint_name(w).to_string(),
            })
            .collect();
        Ok(Some(Directions {
            route_json,
            geometry,
            arc_ids,
            waypoints,
            metric: route.metric.name(),
        }))
    }

    /// A whole directions v2 response body: `{"route": …, "waypoints": […]` followed by `tail`,
    /// the caller's remaining members and the closing brace (`,"search_id":…}`). Writing it here, in
    /// one buffer, keeps the server's thread to a single copy of the bytes. `Ok(None)` when no
    /// route exists.
    pub fn directions_response(
        &self,
        req: &RouteRequest,
        ebike: bool,
        tail: &str,
    ) -> Result<Option<Vec<u8>>, RouteError> {
        let Some((route, guided)) = self.guided(req, ebike)? else {
            return Ok(None);
        };
        let legs = worded(&guided);
        let mut out = Vec::with_capacity(route_size_hint(&legs) + 256 + tail.len());
        out.extend_from_slice(br#"{"route":"#);
        write_route(&mut out, &legs, req.profile);
        out.extend_from_slice(br#","waypoints":"#);
        write_waypoints(
            &mut out,
            route
                .waypoints
                .iter()
                .map(|w| (self.waypoint_name(w), location(w))),
        );
        out.extend_from_slice(tail.as_bytes());
        Ok(Some(out))
    }
}
