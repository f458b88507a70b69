//! Elevation models: GeoTIFF (georeferenced by ModelTiepoint + ModelPixelScale, as SRTM crops are)
//! and SRTM `.hgt` tiles. Elevation at a point is bilinear between the four surrounding posts.

use std::path::Path;

/// One raster in geographic coordinates (pixel-is-point posts).
pub struct Dem {
    /// Longitude and latitude of post (0, 0), the top-left one.
    origin_lon: f64,
    origin_lat: f64,
    /// Post spacing in degrees (latitude decreases with rows).
    step_lon: f64,
    step_lat: f64,
    width: usize,
    height: usize,
    /// Row-major elevations in metres; NaN for no-data.
    data: Vec<f32>,
}

impl Dem {
    pub fn open(path: &Path) -> Result<Dem, String> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if name.ends_with(".hgt") {
            read_hgt(path)
        } else if name.ends_with(".tif") || name.ends_with(".tiff") {
            read_geotiff(path)
        } else {
            Err(format!(
                "{}: unknown elevation file type (expected .tif or .hgt)",
                path.display()
            ))
        }
    }

    /// `[min_lon, min_lat, max_lon, max_lat]` of the posts.
    pub fn bounds(&self) -> [f64; 4] {
        [
            self.origin_lon,
            self.origin_lat - (self.height - 1) as f64 * self.step_lat,
            self.origin_lon + (self.width - 1) as f64 * self.step_lon,
            self.origin_lat,
        ]
    }

    /// Elevation in metres, or None outside the raster or next to no-data.
    pub fn elevation(&self, lon: f64, lat: f64) -> Option<f32> {
        let x = (lon - self.origin_lon) / self.step_lon;
        let y = (self.origin_lat - lat) / self.step_lat;
        if !(x >= 0.0 && y >= 0.0) || x > (self.width - 1) as f64 || y > (self.height - 1) as f64 {
            return None;
        }
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
        let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
        let at = |xx: usize, yy: usize| self.data[yy * self.width + xx];
        let v = at(x0, y0) * (1.0 - fx) * (1.0 - fy)
            + at(x1, y0) * fx * (1.0 - fy)
            + at(x0, y1) * (1.0 - fx) * fy
            + at(x1, y1) * fx * fy;
        if v.is_nan() { None } else { Some(v) }
    }
}

/// Several rasters: the first that covers a point answers.
pub struct DemSet(pub Vec<Dem>);

impl DemSet {
    pub fn elevation(&self, lon: f64, lat: f64) -> Option<f32> {
        self.0.iter().find_map(|d| d.elevation(lon, lat))
    }
}

fn read_hgt(path: &Path) -> Result<Dem, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let side = match bytes.len() {
        n if n == 3601 * 3601 * 2 => 3601,
        n if n == 1201 * 1201 * 2 => 1201,
        n => {
            return Err(format!(
                "{}: {n} bytes is not an SRTM tile (1 or 3 arc-second)",
                path.display()
            ));
        }
    };
    // Name like N37W123.hgt: the south-west corner.
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_ascii_uppercase();
    let bad = || format!("{}: an SRTM tile is named like N37W123.hgt", path.display());
    if stem.len() < 7 {
        return Err(bad());
    }
    let lat: f64 = stem[1..3].parse().map_err(|_| bad())?;
    let lon: f64 = stem[4..7].parse().map_err(|_| bad())?;
    let lat = if stem.starts_with('S') { -lat } else { lat };
    let lon = if stem.as_bytes()[3] == b'W' {
        -lon
    } else {
        lon
    };
    let data = bytes
        .chunks_exact(2)
        .map(|c| {
            let v = i16::from_be_bytes([c[0], c[1]]);
            if v == -32768 { f32::NAN } else { v as f32 }
        })
        .collect();
    let step = 1.0 / (side - 1) as f64;
    Ok(Dem {
        origin_lon: lon,
        origin_lat: lat + 1.0,
        step_lon: step,
        step_lat: step,
        width: side,
        height: side,
        data,
    })
}

fn read_geotiff(path: &Path) -> Result<Dem, String> {
    use tiff::decoder::{Decoder, DecodingResult};
    use tiff::tags::Tag;
    let err =
        |e: &dyn std::fmt::Display| format!("{}: not a readable GeoTIFF ({e})", path.display());
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = Decoder::new(std::io::BufReader::new(file)).map_err(|e| err(&e))?;
    let (width, height) = dec.dimensions().map_err(|e| err(&e))?;
    let scale = dec
        .get_tag_f64_vec(Tag::Unknown(33550))
        .map_err(|_| err(&"no ModelPixelScale tag"))?;
    let tie = dec
        .get_tag_f64_vec(Tag::Unknown(33922))
        .map_err(|_| err(&"no ModelTiepoint tag"))?;
    let nodata: Option<f64> = dec
        .get_tag_ascii_string(Tag::Unknown(42113))
        .ok()
        .and_then(|s| s.trim_matches(char::from(0)).trim().parse().ok());
    // GTRasterTypeGeoKey: 1 = pixel is area (tie point at the pixel corner), 2 = pixel is point.
    let pixel_is_area = dec
        .get_tag_u32_vec(Tag::Unknown(34735))
        .map(|keys| {
            keys.chunks_exact(4)
                .skip(1)
                .find(|k| k[0] == 1025)
                .map(|k| k[3] != 2)
                .unwrap_or(true)
        })
        .unwrap_or(true);
    if scale.len() < 2 || tie.len() < 6 {
        return Err(err(&"incomplete georeferencing"));
    }
    let data: Vec<f32> = match dec.read_image().map_err(|e| err(&e))? {
        DecodingResult::I16(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::U16(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::F32(v) => v,
        DecodingResult::F64(v) => v.into_iter().map(|x| x as f32).collect(),
        _ => return Err(err(&"unsupported sample type")),
    };
    let data = data
        .into_iter()
        .map(|v| {
            if nodata.is_some_and(|n| v as f64 == n) || v <= -32768.0 {
                f32::NAN
            } else {
                v
            }
        })
        .collect::<Vec<f32>>();
    if data.len() != width as usize * height as usize {
        return Err(err(&"multi-band rasters are not supported"));
    }
    let (sx, sy) = (scale[0], scale[1]);
    let (i, j, x, y) = (tie[0], tie[1], tie[3], tie[4]);
    let half = if pixel_is_area { 0.5 } else { 0.0 };
    Ok(Dem {
        origin_lon: x - (i - half) * sx,
        origin_lat: y + (j - half) * sy,
        step_lon: sx,
        step_lat: sy,
        width: width as usize,
        height: height as usize,
        data,
    })
}
