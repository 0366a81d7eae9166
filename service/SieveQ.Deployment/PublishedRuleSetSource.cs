using SieveQ.Sieve.Envelope;
using SieveQ.Rules.Signing;

namespace SieveQ.Deployment;

/// <summary>A published rule set as fetched: the document and its signature file, not yet checked.</summary>
public sealed record FetchedRuleSet(byte[] Document, byte[] Signature);

/// <summary>Why a published rule set could not be fetched (the location is down or wrong); the follower tries again later.</summary>
public sealed class RuleSetFetchException(string message, Exception? inner = null) : Exception(message, inner);

/// <summary>
/// Reads the rule set Group Policy points at: FILE and FILE.sig for a fully qualified or UNC path, URL and
/// URL.sig for an https:// location (the policy refuses plain http, where anyone on the path could serve an
/// old, validly signed version). Both are read with the ordering's size limits, so a location serving
/// something huge costs one bounded read.
/// </summary>
public sealed class PublishedRuleSetSource(HttpClient? http = null)
{
    private static readonly TimeSpan HttpTimeout = TimeSpan.FromSeconds(30);

    public async Task<FetchedRuleSet> FetchAsync(string location, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(location);
        if (Uri.TryCreate(location, UriKind.Absolute, out var url) && url.Scheme == Uri.UriSchemeHttps)
        {
            var document = await GetAsync(url, EnvelopeLimits.MaxRuleSetDocumentBytes, ct).ConfigureAwait(false);
            var signature = await GetAsync(new Uri(location + SignatureSidecar.Extension), EnvelopeLimits.MaxRuleSetSignatureFileBytes, ct).ConfigureAwait(false);
            return new FetchedRuleSet(document, signature);
        }
        if (!Path.IsPathFullyQualified(location))
        {
            throw new RuleSetFetchException($"'{location}' is neither a fully qualified path nor an https:// URL");
        }
        return new FetchedRuleSet(
            await ReadFileAsync(location, EnvelopeLimits.MaxRuleSetDocumentBytes, ct).ConfigureAwait(false),
            await ReadFileAsync(location + SignatureSidecar.Extension, EnvelopeLimits.MaxRuleSetSignatureFileBytes, ct).ConfigureAwait(false));
    }

    private static async Task<byte[]> ReadFileAsync(string path, int limit, CancellationToken ct)
    {
        try
        {
            var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 4096, useAsync: true);
            await using (stream.ConfigureAwait(false))
            {
                return await ReadBoundedAsync(stream, limit, path, ct).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new RuleSetFetchException($"cannot read {path}: {e.Message}", e);
        }
    }

    private async Task<byte[]> GetAsync(Uri url, int limit, CancellationToken ct)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
        timeout.CancelAfter(HttpTimeout);
        var client = http ?? Shared.Value;
        try
        {
            using var response = await client.GetAsync(url, HttpCompletionOption.ResponseHeadersRead, timeout.Token).ConfigureAwait(false);
            if (!response.IsSuccessStatusCode)
            {
                throw new RuleSetFetchException($"GET {url} answered {(int)response.StatusCode} {response.ReasonPhrase}");
            }
            if (response.Content.Headers.ContentLength > limit)
            {
                throw new RuleSetFetchException($"{url} is {response.Content.Headers.ContentLength} bytes, the limit is {limit}");
            }
            var stream = await response.Content.ReadAsStreamAsync(timeout.Token).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                return await ReadBoundedAsync(stream, limit, url.ToString(), timeout.Token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is HttpRequestException or IOException || (e is OperationCanceledException && !ct.IsCancellationRequested))
        {
            throw new RuleSetFetchException($"cannot fetch {url}: {e.Message}", e);
        }
    }

    /// <summary>Reads at most <paramref name="limit"/> bytes, whatever the source claims about its length.</summary>
    private static async Task<byte[]> ReadBoundedAsync(Stream stream, int limit, string what, CancellationToken ct)
    {
        var buffer = new MemoryStream();
        var chunk = new byte[16 * 1024];
        int read;
        while ((read = await stream.ReadAsync(chunk, ct).ConfigureAwait(false)) > 0)
        {
            if (buffer.Length + read > limit)
            {
                throw new RuleSetFetchException($"{what} is over the limit of {limit} bytes");
            }
            buffer.Write(chunk, 0, read);
        }
        return buffer.ToArray();
    }

    private static readonly Lazy<HttpClient> Shared = new(() => new HttpClient { Timeout = Timeout.InfiniteTimeSpan });
}
