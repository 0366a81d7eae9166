using System.Security.Cryptography;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Controller.Access;

public sealed record CallerAuthenticatorOptions
{
    /// <summary>How far a request's timestamp may be from the controller's clock, either way.</summary>
    public TimeSpan Freshness { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>Nonces remembered at once; a request that would need one more is refused, never let through unremembered.</summary>
    public int MaxNonces { get; init; } = 100_000;

    public TimeProvider Time { get; init; } = TimeProvider.System;
}

/// <summary>
/// Authenticates one management request: the key id must be pinned (controller.json), the signature must verify with
/// that pinned key, the timestamp must be fresh and the nonce new within the freshness window. Keys are never taken
/// from the request itself. Thread-safe.
/// </summary>
public sealed class CallerAuthenticator : IDisposable
{
    private readonly Dictionary<string, (PinnedCaller Caller, ECDsa Key)> _pinned = new(StringComparer.Ordinal);
    private readonly Dictionary<string, long> _nonces = new(StringComparer.Ordinal);
    private readonly Lock _nonceLock = new();
    private readonly CallerAuthenticatorOptions _options;

    public CallerAuthenticator(IEnumerable<PinnedCaller> callers, CallerAuthenticatorOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(callers);
        _options = options ?? new CallerAuthenticatorOptions();
        foreach (var c in callers)
        {
            var key = ECDsa.Create();
            key.ImportSubjectPublicKeyInfo(c.PublicKeySpki, out _);
            if (key.KeySize != 256)
            {
                throw new ArgumentException($"management caller '{c.Name}': not an ECDSA P-256 key");
            }
            if (!_pinned.TryAdd(c.KeyId, (c, key)))
            {
                throw new ArgumentException($"management caller '{c.Name}': its key is pinned twice");
            }
        }
    }

    public int RememberedNonces
    {
        get
        {
            lock (_nonceLock)
            {
                return _nonces.Count;
            }
        }
    }

    /// <summary>The caller, or <see cref="GrpcCallException"/> UNAUTHENTICATED (RESOURCE_EXHAUSTED when the nonce cache is full).</summary>
    public CallerIdentity Authenticate(string method, SignedManagementRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (!_pinned.TryGetValue(request.KeyId, out var pinned))
        {
            throw Refused("the key is not pinned in the controller's configuration");
        }
        if (request.Nonce.Length != ManagementSignature.NonceBytes || request.Signature.Length != 64)
        {
            throw Refused("a request needs a 16-byte nonce and a 64-byte P-256 signature");
        }
        var signed = ManagementSignature.SignedBytes(method, request.Body.Span, request.TimestampMs, request.Nonce.Span);
        if (!pinned.Key.VerifyData(signed, request.Signature.Span, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation))
        {
            throw Refused("the signature does not verify with the pinned key");
        }
        // Freshness and nonce only after the signature: an unauthenticated flood must not fill the nonce cache.
        var now = _options.Time.GetUtcNow().ToUnixTimeMilliseconds();
        var window = (long)_options.Freshness.TotalMilliseconds;
        if (Math.Abs(now - request.TimestampMs) > window)
        {
            throw Refused($"the timestamp is more than {_options.Freshness.TotalSeconds:0} s from the controller's clock");
        }
        var nonceKey = request.KeyId + ":" + Convert.ToHexStringLower(request.Nonce.Span);
        lock (_nonceLock)
        {
            if (_nonces.ContainsKey(nonceKey))
            {
                throw Refused("the nonce was used before (a replayed request)");
            }
            if (_nonces.Count >= _options.MaxNonces)
            {
                // A nonce can be forgotten once its request's timestamp is outside the window: it would be refused as stale.
                foreach (var (k, expiry) in _nonces.Where(kv => kv.Value < now).ToList())
                {
                    _ = expiry;
                    _nonces.Remove(k);
                }
                if (_nonces.Count >= _options.MaxNonces)
                {
                    throw new GrpcCallException(GrpcStatusCode.ResourceExhausted, "too many management requests within the freshness window");
                }
            }
            _nonces.Add(nonceKey, request.TimestampMs + window);
        }
        return new CallerIdentity(pinned.Caller.KeyId, pinned.Caller.Name, pinned.Caller.Role, pinned.Caller.ReplicaId);
    }

    /// <summary>PERMISSION_DENIED unless the caller's role is at least <paramref name="required"/>.</summary>
    public static void RequireRole(CallerIdentity caller, ManagementRole required)
    {
        ArgumentNullException.ThrowIfNull(caller);
        if (caller.Role < required)
        {
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, RoleRefusal(caller, required));
        }
    }

    public static string RoleRefusal(CallerIdentity caller, ManagementRole required)
    {
        ArgumentNullException.ThrowIfNull(caller);
        return $"role {caller.Role.ToString().ToLowerInvariant()} is below {required.ToString().ToLowerInvariant()}";
    }

    public void Dispose()
    {
        foreach (var (_, key) in _pinned.Values)
        {
            key.Dispose();
        }
    }

    private static GrpcCallException Refused(string why) => new(GrpcStatusCode.Unauthenticated, why);
}
