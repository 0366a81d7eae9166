using System.Net;
using System.Net.Http.Headers;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// POSTs each notice's JSON document to one webhook, signed (<see cref="AlarmWebhookSignature"/>) with a timestamp
/// taken at each try, so a retry is a fresh request a receiver accepts and a replay of an old one is not.
/// Redirects are not followed: a signed notice goes only where console.json says. The receiver's certificate is
/// checked against the system's CAs, or against its <c>tlsPin</c>.
/// </summary>
public sealed class AlarmWebhookChannel : IAlarmChannel, IDisposable
{
    private readonly HttpClient _http;
    private readonly Uri _url;
    private readonly string _secret;
    private readonly TimeProvider _time;

    public AlarmWebhookChannel(AlarmWebhookConfig config, string secret, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(config);
        Name = "webhook:" + config.Name;
        _url = new Uri(config.Url);
        _secret = secret;
        _time = time;
        var handler = new SocketsHttpHandler
        {
            AllowAutoRedirect = false,
            UseCookies = false,
            UseProxy = false,
            PooledConnectionLifetime = TimeSpan.FromMinutes(5),
        };
        if (AlarmTlsTrust.Callback(config.TlsPin) is { } pinned)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = pinned;
        }
        _http = new HttpClient(handler)
        {
            // The queue cancels each try at its own bound; this one only stops HttpClient's default of 100 s from applying first.
            Timeout = Timeout.InfiniteTimeSpan,
        };
    }

    public string Name { get; }

    public async Task SendAsync(AlarmNotice notice, CancellationToken ct)
    {
        var body = AlarmNoticeDocument.Serialize(notice);
        var timestamp = _time.GetUtcNow().ToUnixTimeSeconds();
        using var request = new HttpRequestMessage(HttpMethod.Post, _url) { Content = new ByteArrayContent(body) };
        request.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json") { CharSet = "utf-8" };
        request.Headers.UserAgent.Add(new ProductInfoHeaderValue("SieveQ-Console", "1"));
        request.Headers.Add(AlarmWebhookSignature.EventIdHeader, notice.EventId);
        request.Headers.Add(AlarmWebhookSignature.TimestampHeader, timestamp.ToString(System.Globalization.CultureInfo.InvariantCulture));
        request.Headers.Add(AlarmWebhookSignature.SignatureHeader, AlarmWebhookSignature.Sign(_secret, timestamp, body));
        // Headers only: the answer's body is not read, so a receiver cannot make the console hold a large one.
        using var response = await _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, ct).ConfigureAwait(false);
        var status = (int)response.StatusCode;
        if (status is >= 200 and < 300)
        {
            return;
        }
        if (status is >= 400 and < 500 && response.StatusCode is not (HttpStatusCode.RequestTimeout or HttpStatusCode.TooManyRequests))
        {
            throw new AlarmNoticeRefusedException($"{_url.GetLeftPart(UriPartial.Path)} answered {status} {response.ReasonPhrase}");
        }
        throw new HttpRequestException($"{_url.GetLeftPart(UriPartial.Path)} answered {status} {response.ReasonPhrase}", null, response.StatusCode);
    }

    public void Dispose() => _http.Dispose();
}
