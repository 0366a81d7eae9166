namespace SieveQ.Fuzz;

/// <summary>
/// The far end of a connection, played by the harness: reads get what the script queued (then end of
/// stream, as when a peer hangs up), writes go to <see cref="OnWrite"/>, which may queue the answer.
/// Every operation completes synchronously, so an async handshake over it runs to completion on the caller.
/// </summary>
internal sealed class ScriptedStream : Stream
{
    private readonly Queue<byte> _incoming = new();

    public Action<byte[]>? OnWrite { get; set; }

    public void Enqueue(ReadOnlySpan<byte> bytes)
    {
        foreach (var b in bytes)
        {
            _incoming.Enqueue(b);
        }
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        var n = 0;
        while (n < buffer.Length && _incoming.Count > 0)
        {
            buffer[n++] = _incoming.Dequeue();
        }
        return n;
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => ValueTask.FromResult(Read(buffer.Span));

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => Task.FromResult(Read(buffer.AsSpan(offset, count)));

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer) => OnWrite?.Invoke(buffer.ToArray());

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Write(buffer.Span);
        return ValueTask.CompletedTask;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        Write(buffer.AsSpan(offset, count));
        return Task.CompletedTask;
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
