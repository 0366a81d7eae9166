using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// One webhook of <c>alarmDelivery.webhooks</c>: notices are POSTed to <see cref="Url"/> as JSON, signed with the key in
/// <see cref="SecretFile"/> (<see cref="AlarmWebhookSignature"/>). https:// only, or http:// to a loopback address (a
/// relay on the console's own host): a notice names components and their faults, and its signature must not be
/// replayable by whoever reads the network.
/// </summary>
public sealed record AlarmWebhookConfig
{
    /// <summary>The channel's name in metrics (<c>webhook:NAME</c>) and logs: letters, digits, '.', '_', '-'.</summary>
    public required string Name { get; init; }
    public required string Url { get; init; }
    /// <summary>The signing key (one line, at least <see cref="MinSecretLength"/> characters, owner-only), relative to the deployment directory.</summary>
    public required string SecretFile { get; init; }

    /// <summary>
    /// Optional: trust the receiver by its key (base64 SHA-256 of its certificate's SubjectPublicKeyInfo, as
    /// deployment.json pins the components) instead of the system's CAs: a receiver inside the site with a certificate
    /// of its own. https:// only.
    /// </summary>
    public string? TlsPin { get; init; }

    public const int MinSecretLength = 16;

    internal void Check(Action<string> refuse)
    {
        if (Name is null || !AlarmDeliveryConfig.ChannelName().IsMatch(Name))
        {
            refuse($"webhook name '{Name}' must be 1 to 64 letters, digits, '.', '_' or '-'");
        }
        if (Url is null || Url.Length > 2048 || !Uri.TryCreate(Url, UriKind.Absolute, out var uri) || uri.Scheme is not ("https" or "http")
            || uri.UserInfo.Length > 0 || uri.Fragment.Length > 0)
        {
            refuse($"webhook '{Name}': url '{Url}' is not an http(s) URL without user info or fragment");
            return;
        }
        if (uri.Scheme == Uri.UriSchemeHttp && !LoopbackHost.Is(uri.Host))
        {
            refuse($"webhook '{Name}': url '{Url}' is cleartext off loopback; use https://");
        }
        if (TlsPin is not null)
        {
            if (uri.Scheme != Uri.UriSchemeHttps)
            {
                refuse($"webhook '{Name}': tlsPin needs an https:// url");
            }
            AlarmTlsTrust.Check(TlsPin, $"webhook '{Name}'", refuse);
        }
        if (string.IsNullOrWhiteSpace(SecretFile))
        {
            refuse($"webhook '{Name}': secretFile is required");
        }
    }
}
