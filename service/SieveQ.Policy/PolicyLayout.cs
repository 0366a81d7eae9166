using System.Collections.Immutable;
using System.Globalization;

namespace SieveQ.Policy;

/// <summary>
/// The registry layout under HKLM\SOFTWARE\Policies\SieveQ that installer/policy/SieveQ.admx writes, and its
/// translation to and from <see cref="AgentPolicy"/>. Only the kinds of values are checked here; what they mean
/// is checked by <see cref="AgentPolicy.Validate"/>.
/// </summary>
public static class PolicyLayout
{
    public const string RootKeyPath = @"SOFTWARE\Policies\SieveQ";

    public const string PreSqEndpointsKey = "PreSqEndpoints";
    public const string ApplicationWhitelistKey = "ApplicationWhitelist";

    public const string ControllerUrl = "ControllerUrl";
    public const string EnrolmentId = "EnrolmentId";
    public const string KeyStorageProvider = "KeyStorageProvider";
    public const string RuleSetLocation = "RuleSetLocation";
    public const string RuleSetSigner = "RuleSetSigner";
    public const string DriverMode = "DriverMode";
    public const string DefaultMessagesPerSecond = "DefaultMessagesPerSecond";
    public const string DefaultMessageBurst = "DefaultMessageBurst";
    public const string DefaultConnectionsPerSecond = "DefaultConnectionsPerSecond";
    public const string BootTimeFilters = "BootTimeFilters";

    public static ImmutableArray<string> RootValueNames { get; } =
    [
        ControllerUrl, EnrolmentId, KeyStorageProvider, RuleSetLocation, RuleSetSigner, DriverMode,
        DefaultMessagesPerSecond, DefaultMessageBurst, DefaultConnectionsPerSecond, BootTimeFilters,
    ];

    public static ImmutableArray<string> SubkeyNames { get; } = [PreSqEndpointsKey, ApplicationWhitelistKey];

    private static readonly ImmutableDictionary<string, Policy.DriverMode> DriverModes =
        ImmutableDictionary.CreateRange(StringComparer.OrdinalIgnoreCase,
        [
            new KeyValuePair<string, Policy.DriverMode>("enforce", Policy.DriverMode.Enforce),
            new KeyValuePair<string, Policy.DriverMode>("audit", Policy.DriverMode.Audit),
        ]);

    private static readonly ImmutableDictionary<string, Policy.KeyStorageProvider> KeyStorages =
        ImmutableDictionary.CreateRange(StringComparer.OrdinalIgnoreCase,
        [
            new KeyValuePair<string, Policy.KeyStorageProvider>("tpm", Policy.KeyStorageProvider.Tpm),
            new KeyValuePair<string, Policy.KeyStorageProvider>("software", Policy.KeyStorageProvider.Software),
        ]);

    public static string Name(Policy.DriverMode mode) => mode.ToString().ToLowerInvariant();

    public static string Name(Policy.KeyStorageProvider provider) => provider.ToString().ToLowerInvariant();

    /// <summary>Interprets a key. Errors make the whole policy unusable; warnings (unknown names) do not,
    /// so that agents keep working when a newer template adds settings they do not know yet.</summary>
    public static AgentPolicy Read(PolicyKey root, List<string> errors, List<string> warnings)
    {
        ArgumentNullException.ThrowIfNull(root);
        ArgumentNullException.ThrowIfNull(errors);
        ArgumentNullException.ThrowIfNull(warnings);
        var reader = new Reader(root, errors);

        foreach (string name in root.Values.Keys.Where(n => !RootValueNames.Contains(n, StringComparer.OrdinalIgnoreCase)))
        {
            warnings.Add($"value '{name}' is not part of the SieveQ policy layout and was ignored");
        }
        foreach (string name in root.Subkeys.Keys.Where(n => !SubkeyNames.Contains(n, StringComparer.OrdinalIgnoreCase)))
        {
            warnings.Add($"key '{name}' is not part of the SieveQ policy layout and was ignored");
        }

        return new AgentPolicy
        {
            PreSqEndpoints = ReadEndpoints(root.Subkey(PreSqEndpointsKey), errors, warnings),
            Enrolment = ReadEnrolment(reader, errors),
            RuleSet = ReadRuleSet(reader, errors),
            DriverMode = reader.Enum(DriverMode, DriverModes) ?? Policy.DriverMode.Enforce,
            DefaultRateLimits = new RateLimits(
                reader.DWord(DefaultMessagesPerSecond) ?? RateLimits.Default.MessagesPerSecond,
                reader.DWord(DefaultMessageBurst) ?? RateLimits.Default.MessageBurst,
                reader.DWord(DefaultConnectionsPerSecond) ?? RateLimits.Default.ConnectionsPerSecond),
            ApplicationWhitelist = ReadWhitelist(root.Subkey(ApplicationWhitelistKey), errors, warnings),
            BootTimeFilters = reader.OnOff(BootTimeFilters) ?? false,
        };
    }

    /// <summary>The registry content Group Policy would write for <paramref name="policy"/>.</summary>
    public static PolicyKey ToKey(AgentPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        var values = new Dictionary<string, PolicyValue>(StringComparer.OrdinalIgnoreCase);
        var subkeys = new Dictionary<string, PolicyKey>(StringComparer.OrdinalIgnoreCase);
        if (policy.Enrolment is { } e)
        {
            values[ControllerUrl] = PolicyValue.String(e.ControllerUrl);
            values[EnrolmentId] = PolicyValue.String(e.EnrolmentId);
            values[KeyStorageProvider] = PolicyValue.String(Name(e.KeyStorage));
        }
        if (policy.RuleSet is { } r)
        {
            values[RuleSetLocation] = PolicyValue.String(r.Location);
            values[RuleSetSigner] = PolicyValue.String(r.SignerSpki);
        }
        values[DriverMode] = PolicyValue.String(Name(policy.DriverMode));
        values[DefaultMessagesPerSecond] = PolicyValue.DWord(policy.DefaultRateLimits.MessagesPerSecond);
        values[DefaultMessageBurst] = PolicyValue.DWord(policy.DefaultRateLimits.MessageBurst);
        values[DefaultConnectionsPerSecond] = PolicyValue.DWord(policy.DefaultRateLimits.ConnectionsPerSecond);
        values[BootTimeFilters] = PolicyValue.DWord(policy.BootTimeFilters ? 1u : 0u);
        if (!policy.PreSqEndpoints.IsDefaultOrEmpty)
        {
            subkeys[PreSqEndpointsKey] = new PolicyKey(
                policy.PreSqEndpoints.Select((url, i) => ((i + 1).ToString(CultureInfo.InvariantCulture), PolicyValue.String(url)))
                    .ToDictionary(p => p.Item1, p => p.Item2),
                new Dictionary<string, PolicyKey>());
        }
        if (!policy.ApplicationWhitelist.IsDefaultOrEmpty)
        {
            var entries = new Dictionary<string, PolicyValue>(StringComparer.OrdinalIgnoreCase);
            foreach (var entry in policy.ApplicationWhitelist)
            {
                entries[entry.ImagePath] = PolicyValue.String(entry.Sha256);
            }
            subkeys[ApplicationWhitelistKey] = new PolicyKey(entries, new Dictionary<string, PolicyKey>());
        }
        return new PolicyKey(values, subkeys);
    }

    private static EnrolmentSettings? ReadEnrolment(Reader reader, List<string> errors)
    {
        string? url = reader.String(ControllerUrl);
        string? id = reader.String(EnrolmentId);
        var storage = reader.Enum(KeyStorageProvider, KeyStorages);
        if (url is null && id is null)
        {
            if (storage is not null)
            {
                errors.Add($"{KeyStorageProvider} is set but {ControllerUrl} and {EnrolmentId} are not: enrolment needs all of it");
            }
            return null;
        }
        if (url is null || id is null)
        {
            errors.Add($"{ControllerUrl} and {EnrolmentId} must be set together (only {(url is null ? EnrolmentId : ControllerUrl)} is)");
            return null;
        }
        return new EnrolmentSettings(url, id, storage ?? Policy.KeyStorageProvider.Tpm);
    }

    private static RuleSetReference? ReadRuleSet(Reader reader, List<string> errors)
    {
        string? location = reader.String(RuleSetLocation);
        string? signer = reader.String(RuleSetSigner);
        if (location is null && signer is null)
        {
            return null;
        }
        if (location is null || signer is null)
        {
            // A location without a pinned signer would have to trust whatever it finds there.
            errors.Add($"{RuleSetLocation} and {RuleSetSigner} must be set together (only {(location is null ? RuleSetSigner : RuleSetLocation)} is)");
            return null;
        }
        return new RuleSetReference(location, signer);
    }

    private static ImmutableArray<string> ReadEndpoints(PolicyKey? key, List<string> errors, List<string> warnings)
    {
        if (key is null)
        {
            return [];
        }
        WarnNested(key, PreSqEndpointsKey, warnings);
        if (key.Values.Count > PolicyLimits.MaxPreSqEndpoints)
        {
            errors.Add($"{PreSqEndpointsKey}: {key.Values.Count} entries, at most {PolicyLimits.MaxPreSqEndpoints} are allowed");
            return [];
        }
        // Group Policy numbers the values 1, 2, 3...; keep that order, and any other names after them.
        var ordered = key.Values
            .OrderBy(p => uint.TryParse(p.Key, NumberStyles.None, CultureInfo.InvariantCulture, out uint n) ? n : uint.MaxValue)
            .ThenBy(p => p.Key, StringComparer.OrdinalIgnoreCase);
        var builder = ImmutableArray.CreateBuilder<string>(key.Values.Count);
        foreach (var (name, value) in ordered)
        {
            if (value.Kind != PolicyValueKind.String)
            {
                errors.Add($@"{PreSqEndpointsKey}\{name}: must be a string (REG_SZ), found {value.TypeName}");
                continue;
            }
            builder.Add(value.Text!);
        }
        return builder.ToImmutable();
    }

    private static ImmutableArray<WhitelistEntry> ReadWhitelist(PolicyKey? key, List<string> errors, List<string> warnings)
    {
        if (key is null)
        {
            return [];
        }
        WarnNested(key, ApplicationWhitelistKey, warnings);
        if (key.Values.Count > PolicyLimits.MaxWhitelistEntries)
        {
            errors.Add($"{ApplicationWhitelistKey}: {key.Values.Count} entries, at most {PolicyLimits.MaxWhitelistEntries} are allowed");
            return [];
        }
        var builder = ImmutableArray.CreateBuilder<WhitelistEntry>(key.Values.Count);
        foreach (var (path, value) in key.Values.OrderBy(p => p.Key, StringComparer.OrdinalIgnoreCase))
        {
            if (value.Kind != PolicyValueKind.String)
            {
                errors.Add($@"{ApplicationWhitelistKey}\{path}: the SHA-256 must be a string (REG_SZ), found {value.TypeName}");
                continue;
            }
            builder.Add(new WhitelistEntry(path, value.Text!));
        }
        return builder.ToImmutable();
    }

    private static void WarnNested(PolicyKey key, string name, List<string> warnings)
    {
        foreach (string sub in key.Subkeys.Keys)
        {
            warnings.Add($@"key '{name}\{sub}' is not part of the SieveQ policy layout and was ignored");
        }
    }

    private sealed class Reader(PolicyKey key, List<string> errors)
    {
        public string? String(string name)
        {
            if (!key.Values.TryGetValue(name, out var value))
            {
                return null;
            }
            if (value.Kind != PolicyValueKind.String)
            {
                errors.Add($"{name}: must be a string (REG_SZ), found {value.TypeName}");
                return null;
            }
            return value.Text;
        }

        public uint? DWord(string name)
        {
            if (!key.Values.TryGetValue(name, out var value))
            {
                return null;
            }
            if (value.Kind != PolicyValueKind.DWord)
            {
                errors.Add($"{name}: must be a number (REG_DWORD; a JSON integer in the file mirror), found {value.TypeName}");
                return null;
            }
            return value.Number;
        }

        /// <summary>The ADMX's enabledValue 1 and disabledValue 0; anything else is not an answer to on or off.</summary>
        public bool? OnOff(string name)
        {
            uint? number = DWord(name);
            if (number is null or 0 or 1)
            {
                return number is null ? null : number == 1;
            }
            errors.Add($"{name}: {number} is not 0 (off) or 1 (on)");
            return null;
        }

        public T? Enum<T>(string name, ImmutableDictionary<string, T> names)
            where T : struct
        {
            string? text = String(name);
            if (text is null)
            {
                return null;
            }
            if (!names.TryGetValue(text, out T parsed))
            {
                errors.Add($"{name}: '{text}' is not one of {string.Join(", ", names.Keys.Order(StringComparer.Ordinal))}");
                return null;
            }
            return parsed;
        }
    }
}
