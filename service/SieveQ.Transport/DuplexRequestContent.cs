using System.Net;

namespace SieveQ.Transport;

/// <summary>
/// A request body that stays open for the life of a streaming call: HttpClient hands us the
/// stream and we keep its serialization pending until the caller completes the request side.
/// </summary>
internal sealed class DuplexRequestContent : HttpContent
{
    private readonly TaskCompletionSource<Stream> _stream = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public DuplexRequestContent() => Headers.TryAddWithoutValidation("Content-Type", "application/grpc");

    public Task<Stream> Stream => _stream.Task;

    public void Complete() => _completed.TrySetResult();

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
    {
        _stream.TrySetResult(stream);
        await _completed.Task.ConfigureAwait(false);
    }

    protected override bool TryComputeLength(out long length)
    {
        length = -1;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        _completed.TrySetResult();
        base.Dispose(disposing);
    }
}
