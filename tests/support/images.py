"""Images for the upload and thumbnail tests (and scripts/bench_thumbnails.py): ordinary ones made
with Pillow, and hostile ones written by hand."""

import io
import struct
import zlib

from PIL import Image


def image_bytes(size=(1600, 1200), fmt="JPEG", exif_orientation=None, frames=1, color=(200, 30, 30)):
    """An image of one colour (or `frames` frames), optionally with an EXIF orientation and a
    camera Make that must not survive into a thumbnail."""
    out = io.BytesIO()
    if frames > 1:
        images = [Image.new("RGB", size, (i * 40 % 256, 100, 100)) for i in range(frames)]
        images[0].save(out, fmt, save_all=True, append_images=images[1:], duration=50, loop=0)
        return out.getvalue()
    image = Image.new("RGB", size, color)
    kwargs = {}
    if exif_orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        exif[0x010F] = "SecretCam"  # Make: must not survive into the thumbnail
        kwargs["exif"] = exif.tobytes()
    image.save(out, fmt, **kwargs)
    return out.getvalue()


def gif_canvas_with_tiny_frames(side=3100, frames=120):
    """A few KB: a huge logical screen, each frame one pixel (written by hand: Pillow's encoder
    would need the whole canvas in memory for every frame)."""
    out = [b"GIF89a", struct.pack("<HHBBB", side, side, 0xF0, 0, 0), b"\x00\x00\x00\xff\xff\xff",
           b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"]
    for index in range(frames):
        out.append(b"\x21\xf9\x04\x04" + struct.pack("<H", 2) + b"\x00\x00")  # 20 ms, keep the canvas
        out.append(b"\x2c" + struct.pack("<HHHH", index % side, 0, 1, 1) + b"\x00")
        # LZW, minimum code size 2: clear (4), the pixel (0 or 1), end (5), three bits each.
        code = 4 | ((index % 2) << 3) | (5 << 6)
        out.append(b"\x02\x02" + struct.pack("<H", code) + b"\x00")
    out.append(b"\x3b")
    return b"".join(out)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_of_zeros(side=9400):
    """A valid grayscale PNG of side x side black pixels, a few hundred KB."""
    compressor = zlib.compressobj(9)
    row = b"\x00" * (side + 1)
    body = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
            + png_chunk(b"IDAT", body) + png_chunk(b"IEND", b""))


def truncated_png(side=300):
    """A PNG whose header is whole (so the upload takes it for an image) but whose pixels stop
    halfway: only a decode finds out."""
    raw = zlib.compress(b"".join(b"\x00" + bytes((x * 7 + y) % 256 for x in range(side * 3)) for y in range(side)))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + png_chunk(b"IDAT", raw[:len(raw) // 2]) + png_chunk(b"IEND", b""))


# An EPS drawing: Pillow's EPS plugin would run Ghostscript on it.
EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n%%EndComments\n"
       b"newpath 0 0 moveto 100 100 lineto stroke showpage\n%%EOF\n")
