//! N-API binding of `quietway-engine`. Thin on purpose: argument checks and conversions here,
//! all routing work in the engine crate.

use napi_derive::napi;
use quietway_engine::geo::{LonLat, haversine_m};

/// The native engine's version.
#[napi]
pub fn engine_version() -> String {
    quietway_engine::VERSION.to_string()
}

/// Great-circle distance in metres between two `[lon, lat]` positions.
#[napi]
pub fn haversine_meters(from: Vec<f64>, to: Vec<f64>) -> napi::Result<f64> {
    Ok(haversine_m(
        to_lon_lat(&from, "from")?,
        to_lon_lat(&to, "to")?,
    ))
}

fn to_lon_lat(v: &[f64], what: &str) -> napi::Result<LonLat> {
    match v {
        [lon, lat] if (-180.0..=180.0).contains(lon) && (-90.0..=90.0).contains(lat) => {
            Ok(LonLat::new(*lon, *lat))
        }
        _ => Err(napi::Error::new(
            napi::Status::InvalidArg,
            format!("{what} must be a [longitude, latitude] pair in range"),
        )),
    }
}
