//! Just enough of PNG to look at a screenshot's pixels: 8-bit RGB or RGBA,
//! not interlaced (what Chromium writes). For checking that a picture
//! shows something, not for showing it.

use std::collections::HashSet;
use std::io::Read;

/// A decoded picture: its size and one RGBA pixel per 4 bytes.
pub struct Picture {
    pub width: usize,
    pub height: usize,
    pub rgba: Vec<u8>,
}

impl Picture {
    /// How many distinct colours it holds.
    pub fn colours(&self) -> usize {
        self.rgba
            .chunks(4)
            .map(|p| [p[0], p[1], p[2]])
            .collect::<HashSet<_>>()
            .len()
    }

    /// The share of pixels, from 0 to 1, that differ from the top left one.
    pub fn drawn(&self) -> f64 {
        let background = &self.rgba[..4];
        let differ = self.rgba.chunks(4).filter(|p| p != &background).count();
        differ as f64 / (self.width * self.height) as f64
    }
}

/// `bytes` decoded, or why not.
pub fn decode(bytes: &[u8]) -> Result<Picture, String> {
    let body = bytes
        .strip_prefix(b"\x89PNG\r\n\x1a\n".as_slice())
        .ok_or("not a PNG signature")?;
    let (mut width, mut height, mut channels) = (0, 0, 0);
    let mut data = Vec::new();
    let mut rest = body;
    while rest.len() >= 12 {
        let length = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let kind = &rest[4..8];
        let chunk = rest.get(8..8 + length).ok_or("a chunk runs past the end")?;
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(chunk[..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(chunk[4..8].try_into().unwrap()) as usize;
                let (depth, colour, interlace) = (chunk[8], chunk[9], chunk[12]);
                channels = match (depth, colour, interlace) {
                    (8, 2, 0) => 3,
                    (8, 6, 0) => 4,
                    other => return Err(format!("unsupported depth, colour type, interlace: {other:?}")),
                };
            }
            b"IDAT" => data.extend_from_slice(chunk),
            b"IEND" => break,
            _ => {}
        }
        rest = &rest[12 + length..];
    }
    if width == 0 || height == 0 {
        return Err("no IHDR".into());
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(data.as_slice())
        .read_to_end(&mut raw)
        .map_err(|e| format!("image data: {e}"))?;
    let stride = width * channels;
    if raw.len() != height * (stride + 1) {
        return Err(format!("{} bytes of image data for {width}x{height}", raw.len()));
    }
    // Undo each scanline's filter (PNG spec, section 9).
    let mut pixels = vec![0u8; height * stride];
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= channels {
                pixels[y * stride + x - channels]
            } else {
                0
            };
            let b = if y > 0 { pixels[(y - 1) * stride + x] } else { 0 };
            let c = if x >= channels && y > 0 {
                pixels[(y - 1) * stride + x - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = ((p - a as i16).abs(), (p - b as i16).abs(), (p - c as i16).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => return Err(format!("unknown filter {other}")),
            };
            pixels[y * stride + x] = line[x].wrapping_add(predicted);
        }
    }
    let rgba = match channels {
        4 => pixels,
        _ => pixels.chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
    };
    Ok(Picture { width, height, rgba })
}
