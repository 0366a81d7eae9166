namespace SieveQ.Cli.Charts;

/// <summary>
/// An opaque RGB raster. Colours are packed as 0xRRGGBB; drawing outside the canvas is clipped.
/// </summary>
internal sealed class Canvas
{
    private readonly uint[] _pixels;

    public Canvas(int width, int height, uint background = ChartColors.White)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(width, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(height, 1);
        Width = width;
        Height = height;
        _pixels = new uint[checked(width * height)];
        Array.Fill(_pixels, background & 0xFFFFFF);
    }

    public int Width { get; }

    public int Height { get; }

    /// <summary>Row-major pixels, 0xRRGGBB.</summary>
    public ReadOnlySpan<uint> Pixels => _pixels;

    public uint this[int x, int y] => _pixels[(y * Width) + x];

    public void SetPixel(int x, int y, uint color)
    {
        if ((uint)x < (uint)Width && (uint)y < (uint)Height)
        {
            _pixels[(y * Width) + x] = color & 0xFFFFFF;
        }
    }

    public void FillRect(int x, int y, int width, int height, uint color)
    {
        var x0 = Math.Max(x, 0);
        var y0 = Math.Max(y, 0);
        var x1 = (int)Math.Min((long)x + width, Width);
        var y1 = (int)Math.Min((long)y + height, Height);
        if (x1 <= x0 || y1 <= y0)
        {
            return;
        }

        for (var row = y0; row < y1; row++)
        {
            _pixels.AsSpan((row * Width) + x0, x1 - x0).Fill(color & 0xFFFFFF);
        }
    }

    /// <summary>Draws a straight line with Bresenham's algorithm using a square pen of <paramref name="thickness"/> pixels.</summary>
    public void Line(int x0, int y0, int x1, int y1, uint color, int thickness = 1)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(thickness, 1);
        var offset = (thickness - 1) / 2;
        var dx = Math.Abs(x1 - x0);
        var dy = -Math.Abs(y1 - y0);
        var sx = x0 < x1 ? 1 : -1;
        var sy = y0 < y1 ? 1 : -1;
        var error = dx + dy;
        while (true)
        {
            if (thickness == 1)
            {
                SetPixel(x0, y0, color);
            }
            else
            {
                FillRect(x0 - offset, y0 - offset, thickness, thickness, color);
            }

            if (x0 == x1 && y0 == y1)
            {
                return;
            }

            var e2 = 2 * error;
            if (e2 >= dy)
            {
                error += dy;
                x0 += sx;
            }

            if (e2 <= dx)
            {
                error += dx;
                y0 += sy;
            }
        }
    }

    /// <summary>Draws <paramref name="text"/> with its top-left corner at (<paramref name="x"/>, <paramref name="y"/>); returns the drawn width.</summary>
    public int Text(int x, int y, string text, uint color, int scale = 1)
    {
        ArgumentNullException.ThrowIfNull(text);
        ArgumentOutOfRangeException.ThrowIfLessThan(scale, 1);
        var penX = x;
        foreach (var c in text)
        {
            var glyph = BitmapFont.Glyph(c);
            for (var row = 0; row < BitmapFont.GlyphHeight; row++)
            {
                for (var col = 0; col < BitmapFont.GlyphWidth; col++)
                {
                    if ((glyph[row] & (1 << (BitmapFont.GlyphWidth - 1 - col))) != 0)
                    {
                        FillRect(penX + (col * scale), y + (row * scale), scale, scale, color);
                    }
                }
            }

            penX += BitmapFont.Advance * scale;
        }

        return BitmapFont.Measure(text, scale);
    }

    /// <summary>Encodes the canvas as an opaque PNG.</summary>
    public byte[] ToPng()
    {
        var rgba = new uint[_pixels.Length];
        for (var i = 0; i < rgba.Length; i++)
        {
            rgba[i] = (_pixels[i] << 8) | 0xFF;
        }

        using var stream = new MemoryStream();
        PngWriter.Write(stream, Width, Height, rgba);
        return stream.ToArray();
    }
}
