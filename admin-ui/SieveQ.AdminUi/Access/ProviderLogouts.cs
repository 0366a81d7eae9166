using System.Security.Claims;
using System.Text.Json;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>One back-channel logout: the provider session (<see cref="Sid"/>) or every session of a subject, at a time of the console's clock.</summary>
public sealed record ProviderLogout(string? Sid, string? Subject, long AtUnixMs);

/// <summary>
/// The provider's back-channel logouts the console has taken (<see cref="BackChannelLogout"/>): a provider session
/// signed in before a logout of its sid, or of its subject when the logout named no sid, no longer stands
/// (<see cref="SessionStanding"/>). Kept in <c>console/provider-logouts.json</c> so that a restart does not bring a
/// logged-out session back; an entry is dropped once every session it could end has expired (<c>sessionMinutes</c>).
/// A damaged file is set aside, and then every provider session signed in before the start ends: failing closed.
/// </summary>
public sealed class ProviderLogouts
{
    /// <summary>Logouts kept at once: each needs a token the provider signed, so only a provider can fill it; when full, a logout is refused (and retried by the provider).</summary>
    public const int MaxEntries = 4096;

    /// <summary>Token ids remembered to refuse a replay; a token is only taken within <see cref="BackChannelLogout.MaxClockSkew"/> of its issue time anyway.</summary>
    public const int MaxTokenIds = 4096;

    private const long MaxFileBytes = 1024 * 1024;

    private readonly string _path;
    private readonly TimeSpan _sessionLength;
    private readonly TimeProvider _time;
    private readonly Lock _lock = new();
    private readonly List<ProviderLogout> _entries;
    private readonly Dictionary<string, long> _tokenIds = new(StringComparer.Ordinal);
    /// <summary>After a damaged file: provider sessions signed in before this time end.</summary>
    private readonly long _allBeforeUnixMs;

    public ProviderLogouts(string path, TimeSpan sessionLength, TimeProvider time, ILogger<ProviderLogouts> log)
    {
        ArgumentNullException.ThrowIfNull(log);
        _path = path;
        _sessionLength = sessionLength;
        _time = time;
        _entries = Load(path, out var problem);
        if (problem is not null)
        {
            _allBeforeUnixMs = time.GetUtcNow().ToUnixTimeMilliseconds();
            log.LogWarning("{Problem}: set aside as {Path}.bad; every provider session signed in before now ends", problem, path);
        }
    }

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _entries.Count;
            }
        }
    }

    public enum Outcome
    {
        Recorded,
        Replayed,
        Full,
    }

    /// <summary>Records a validated logout; <paramref name="tokenId"/> (the token's jti) refuses a second delivery of the same token.</summary>
    public Outcome Record(string? sid, string? subject, string tokenId)
    {
        if (sid is null && subject is null)
        {
            throw new ArgumentException("a logout names a sid, a subject or both");
        }
        var now = _time.GetUtcNow().ToUnixTimeMilliseconds();
        lock (_lock)
        {
            var tokenHorizon = now - (long)(2 * BackChannelLogout.MaxClockSkew).TotalMilliseconds;
            foreach (var old in _tokenIds.Where(t => t.Value < tokenHorizon).Select(t => t.Key).ToList())
            {
                _tokenIds.Remove(old);
            }
            if (_tokenIds.ContainsKey(tokenId))
            {
                return Outcome.Replayed;
            }
            _entries.RemoveAll(e => e.AtUnixMs < now - (long)_sessionLength.TotalMilliseconds);
            if (_entries.Count >= MaxEntries || _tokenIds.Count >= MaxTokenIds)
            {
                return Outcome.Full;
            }
            _tokenIds[tokenId] = now;
            // A sid names one session, so the subject is kept only for a logout without one (every session of the subject).
            _entries.Add(new ProviderLogout(sid, sid is null ? subject : null, now));
            Save();
            return Outcome.Recorded;
        }
    }

    /// <summary>Whether a provider session (its claims from <see cref="BackChannelLogout.SessionClaims"/>) was logged out.</summary>
    public bool Ended(ClaimsPrincipal session)
    {
        ArgumentNullException.ThrowIfNull(session);
        var signedInAt = long.TryParse(session.FindFirst(BackChannelLogout.SignedInAtClaim)?.Value, out var at) ? at : long.MinValue;
        var sid = session.FindFirst(BackChannelLogout.SidClaim)?.Value;
        var subject = session.FindFirst(BackChannelLogout.SubjectClaim)?.Value;
        if (signedInAt < _allBeforeUnixMs)
        {
            return true;
        }
        lock (_lock)
        {
            return _entries.Any(e => e.AtUnixMs >= signedInAt
                && ((e.Sid is not null && e.Sid == sid) || (e.Subject is not null && e.Subject == subject)));
        }
    }

    private void Save()
    {
        using (var file = OwnerOnlyFile.CreateTemporary(_path))
        {
            JsonSerializer.Serialize(file, _entries, ConsoleConfig.Options);
            file.Flush(flushToDisk: true);
        }
        OwnerOnlyFile.Commit(_path);
    }

    private static List<ProviderLogout> Load(string path, out string? problem) =>
        SetAsideJsonList.Load<ProviderLogout>(path, MaxFileBytes, entries =>
        {
            if (entries.Count > MaxEntries || entries.Any(e => e is null || (e.Sid is null && e.Subject is null)
                || e.Sid?.Length > BackChannelLogout.MaxIdLength || e.Subject?.Length > BackChannelLogout.MaxIdLength))
            {
                throw new InvalidDataException($"more than {MaxEntries} entries, or an entry without a sid or subject or with one over {BackChannelLogout.MaxIdLength} characters");
            }
        }, out problem);
}
