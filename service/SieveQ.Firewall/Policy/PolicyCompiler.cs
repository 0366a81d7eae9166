using System.Buffers.Binary;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace SieveQ.Firewall.Policy;

/// <summary>
/// Compiles the endpoint policy into the driver's binary blob (docs: driver/docs/policy-format.md),
/// byte for byte in the canonical layout the golden vectors in driver/golden pin down.
/// </summary>
public static class PolicyCompiler
{
    private sealed record CompiledIdentity(uint Id, byte Kind, byte Flags, ushort ClassId, string? Name, string? User,
        byte[] Sha256, uint ConnRate, uint ConnBurst);

    private sealed record CompiledRule(uint Id, uint Identity, byte Family, byte Prefix, byte Protocol, byte Direction,
        ushort PortLo, ushort PortHi, byte[] Address, ushort ClassId);

    public static byte[] Compile(EndpointPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        var classes = CompileClasses(policy.Classes);
        var identities = new List<CompiledIdentity>();
        var rules = new List<CompiledRule>();
        int flatIndex = 0;
        for (int i = 0; i < policy.Applications.Count; i++)
        {
            var app = policy.Applications[i];
            var identity = CompileIdentity(app, (uint)(i + 1), classes);
            identities.Add(identity);
            foreach (var rule in app.Allow)
            {
                flatIndex++;
                rules.Add(CompileRule(rule, (uint)flatIndex, identity.Id, classes));
            }
        }
        identities.Sort((a, b) => a.Id.CompareTo(b.Id));
        rules.Sort((a, b) => a.Id.CompareTo(b.Id));
        RequireUnique(identities.Select(x => x.Id), "application id");
        RequireUnique(rules.Select(x => x.Id), "rule id");
        RequireUnique(identities.Where(x => x.Kind != PolicyFormat.KindImageHash)
            .Select(x => $"{x.Kind}:{x.Name!.ToUpperInvariant()}"), "application path or service");
        RequireUnique(identities.Where(x => x.Kind == PolicyFormat.KindImageHash)
            .Select(x => Convert.ToHexString(x.Sha256)), "application sha256");

        if (policy.Hierarchy.Count is 0 or > PolicyFormat.MaxLevels)
        {
            throw new PolicyException($"hierarchy needs 1 to {PolicyFormat.MaxLevels} levels");
        }
        if (policy.InitialLevel < 0 || policy.InitialLevel >= policy.Hierarchy.Count)
        {
            throw new PolicyException("initialLevel is not a level of the hierarchy");
        }
        return Write(policy, classes, identities, rules);
    }

    private static Dictionary<string, (int Index, TrafficClass Class)> CompileClasses(IReadOnlyList<TrafficClass> list)
    {
        if (list.Count is 0 or > PolicyFormat.MaxClasses)
        {
            throw new PolicyException($"a policy needs 1 to {PolicyFormat.MaxClasses} traffic classes");
        }
        var byName = new Dictionary<string, (int, TrafficClass)>(StringComparer.Ordinal);
        for (int i = 0; i < list.Count; i++)
        {
            var c = list[i];
            if (c.Id is < 0 or >= PolicyFormat.ClassInherit)
            {
                throw new PolicyException($"class '{c.Name}': id {c.Id} out of range");
            }
            if (c.Weight == 0)
            {
                throw new PolicyException($"class '{c.Name}': weight must be at least 1");
            }
            CheckRate(c.PacketsPerSecond, c.PacketBurst, $"class '{c.Name}' packets");
            CheckRate(c.BytesPerSecond, c.ByteBurst, $"class '{c.Name}' bytes");
            CheckRate(c.ConnectionsPerSecond, c.ConnectionBurst, $"class '{c.Name}' connections");
            if (!byName.TryAdd(c.Name, (i, c)))
            {
                throw new PolicyException($"class name '{c.Name}' is used twice");
            }
        }
        RequireUnique(list.Select(c => c.Id), "class id");
        return byName;
    }

    private static void CheckRate(uint rate, uint burst, string what)
    {
        if (rate == 0 && burst != 0)
        {
            throw new PolicyException($"{what}: a burst needs a rate (0 means unlimited)");
        }
        if (rate != 0 && burst == 0)
        {
            throw new PolicyException($"{what}: a rate needs a burst of at least 1");
        }
    }

    private static ushort ClassId(string name, Dictionary<string, (int Index, TrafficClass Class)> classes, string where)
    {
        if (!classes.TryGetValue(name, out var c))
        {
            throw new PolicyException($"{where}: unknown class '{name}'");
        }
        return (ushort)c.Class.Id;
    }

    private static CompiledIdentity CompileIdentity(Application app, uint defaultId,
        Dictionary<string, (int Index, TrafficClass Class)> classes)
    {
        uint id = app.Id ?? defaultId;
        string where = $"application {id}";
        if (id == 0)
        {
            throw new PolicyException($"{where}: id 0 is reserved");
        }
        byte[] sha = new byte[32];
        if (app.Sha256 is not null)
        {
            try
            {
                sha = Convert.FromHexString(app.Sha256);
            }
            catch (FormatException e)
            {
                throw new PolicyException($"{where}: sha256 is not hex", e);
            }
            if (sha.Length != 32 || sha.All(b => b == 0))
            {
                throw new PolicyException($"{where}: sha256 must be 32 non-zero bytes");
            }
        }
        byte kind;
        byte flags = 0;
        string? name;
        if (app.Service is not null)
        {
            if (app.Path is not null || app.Sha256 is not null)
            {
                throw new PolicyException($"{where}: a service is named by its service name only");
            }
            kind = PolicyFormat.KindService;
            name = app.Service;
        }
        else if (app.Path is not null)
        {
            kind = PolicyFormat.KindImagePath;
            name = app.Path;
            if (app.Sha256 is not null)
            {
                flags |= PolicyFormat.FlagRequireHash;
            }
        }
        else if (app.Sha256 is not null)
        {
            kind = PolicyFormat.KindImageHash;
            name = null;
        }
        else
        {
            throw new PolicyException($"{where}: needs a path, a sha256 or a service");
        }
        if (name is not null && Encoding.UTF8.GetByteCount(name) is 0 or > PolicyFormat.MaxName)
        {
            throw new PolicyException($"{where}: name must be 1 to {PolicyFormat.MaxName} UTF-8 bytes");
        }
        if (app.User is not null)
        {
            if (Encoding.UTF8.GetByteCount(app.User) is 0 or > PolicyFormat.MaxUser)
            {
                throw new PolicyException($"{where}: user SID too long");
            }
            flags |= PolicyFormat.FlagMatchUser;
        }
        CheckRate(app.ConnectionsPerSecond, app.ConnectionBurst, $"{where} connections");
        return new CompiledIdentity(id, kind, flags, ClassId(app.Class, classes, where), name, app.User, sha,
            app.ConnectionsPerSecond, app.ConnectionBurst);
    }

    private static CompiledRule CompileRule(AllowRule rule, uint defaultId, uint identity,
        Dictionary<string, (int Index, TrafficClass Class)> classes)
    {
        uint id = rule.Id ?? defaultId;
        string where = $"rule {id}";
        if (id == 0)
        {
            throw new PolicyException($"{where}: id 0 is reserved");
        }
        var (family, prefix, address) = ParseRemote(rule.Remote, where);
        byte protocol = rule.Protocol.ToLowerInvariant() switch
        {
            "any" => 0,
            "tcp" => 6,
            "udp" => 17,
            "icmp" => 1,
            "icmpv6" => 58,
            var p when byte.TryParse(p, NumberStyles.None, CultureInfo.InvariantCulture, out var n) => n,
            _ => throw new PolicyException($"{where}: unknown protocol '{rule.Protocol}'"),
        };
        var (lo, hi) = ParsePorts(rule.Ports, where);
        if (protocol is not (0 or 6 or 17) && (lo != 0 || hi != 0xFFFF))
        {
            throw new PolicyException($"{where}: ports apply only to TCP and UDP");
        }
        byte direction = rule.Direction.ToLowerInvariant() switch
        {
            "out" => PolicyFormat.DirOut,
            "in" => PolicyFormat.DirIn,
            "both" => PolicyFormat.DirBoth,
            _ => throw new PolicyException($"{where}: direction must be out, in or both"),
        };
        ushort cls = rule.Class is null ? PolicyFormat.ClassInherit : ClassId(rule.Class, classes, where);
        return new CompiledRule(id, identity, family, prefix, protocol, direction, lo, hi, address, cls);
    }

    internal static (byte Family, byte Prefix, byte[] Address) ParseRemote(string remote, string where)
    {
        var address = new byte[16];
        if (remote.Equals("any", StringComparison.OrdinalIgnoreCase))
        {
            return (0, 0, address);
        }
        string text = remote;
        int? prefix = null;
        int slash = remote.IndexOf('/', StringComparison.Ordinal);
        if (slash >= 0)
        {
            text = remote[..slash];
            if (!int.TryParse(remote[(slash + 1)..], NumberStyles.None, CultureInfo.InvariantCulture, out int p))
            {
                throw new PolicyException($"{where}: bad prefix length in '{remote}'");
            }
            prefix = p;
        }
        if (!IPAddress.TryParse(text, out var ip))
        {
            throw new PolicyException($"{where}: '{remote}' is not an address or prefix");
        }
        byte[] raw = ip.GetAddressBytes();
        byte family = ip.AddressFamily == AddressFamily.InterNetwork ? (byte)4 : (byte)6;
        int max = family == 4 ? 32 : 128;
        int len = prefix ?? max;
        if (len < 0 || len > max)
        {
            throw new PolicyException($"{where}: prefix length {len} out of range for IPv{family}");
        }
        for (int bit = len; bit < max; bit++)
        {
            if ((raw[bit / 8] & (0x80 >> (bit % 8))) != 0)
            {
                throw new PolicyException($"{where}: '{remote}' has host bits set beyond /{len}");
            }
        }
        raw.CopyTo(address, 0);
        return (family, (byte)len, address);
    }

    internal static (ushort Lo, ushort Hi) ParsePorts(string ports, string where)
    {
        if (ports.Equals("any", StringComparison.OrdinalIgnoreCase))
        {
            return (0, 0xFFFF);
        }
        string[] parts = ports.Split('-');
        if (parts.Length is < 1 or > 2
            || !ushort.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out ushort lo)
            || !ushort.TryParse(parts[^1], NumberStyles.None, CultureInfo.InvariantCulture, out ushort hi))
        {
            throw new PolicyException($"{where}: bad port range '{ports}'");
        }
        if (lo > hi)
        {
            throw new PolicyException($"{where}: port range '{ports}' is reversed");
        }
        return (lo, hi);
    }

    private static void RequireUnique<T>(IEnumerable<T> values, string what)
    {
        var seen = new HashSet<T>();
        foreach (var v in values)
        {
            if (!seen.Add(v))
            {
                throw new PolicyException($"duplicate {what}: {v}");
            }
        }
    }

    private static int Align8(int n) => (n + 7) & ~7;

    private static byte[] Write(EndpointPolicy policy, Dictionary<string, (int Index, TrafficClass Class)> classes,
        List<CompiledIdentity> identities, List<CompiledRule> rules)
    {
        var strings = new MemoryStream();
        var nameRefs = new List<(uint NameOff, uint NameLen, uint UserOff, uint UserLen)>();
        foreach (var id in identities)
        {
            (uint, uint) Append(string? s)
            {
                if (s is null)
                {
                    return (0, 0);
                }
                byte[] b = Encoding.UTF8.GetBytes(s);
                uint off = (uint)strings.Length;
                strings.Write(b);
                return (off, (uint)b.Length);
            }
            var (no, nl) = Append(id.Name);
            var (uo, ul) = Append(id.User);
            nameRefs.Add((no, nl, uo, ul));
        }
        var classList = classes.Values.OrderBy(c => c.Index).Select(c => c.Class).ToList();

        var sections = new List<(ushort Type, int Length, uint Count)> { (PolicyFormat.SectSettings, PolicyFormat.SettingsSize, 1) };
        if (strings.Length > 0)
        {
            sections.Add((PolicyFormat.SectStrings, (int)strings.Length, (uint)strings.Length));
        }
        if (identities.Count > 0)
        {
            sections.Add((PolicyFormat.SectIdentities, identities.Count * PolicyFormat.IdentitySize, (uint)identities.Count));
        }
        if (rules.Count > 0)
        {
            sections.Add((PolicyFormat.SectRules, rules.Count * PolicyFormat.RuleSize, (uint)rules.Count));
        }
        sections.Add((PolicyFormat.SectClasses, classList.Count * PolicyFormat.ClassSize, (uint)classList.Count));
        if (policy.SynLimits is not null)
        {
            sections.Add((PolicyFormat.SectSyn, PolicyFormat.SynSize, 1));
        }
        sections.Add((PolicyFormat.SectLevels, policy.Hierarchy.Count * PolicyFormat.LevelSize, (uint)policy.Hierarchy.Count));

        var offsets = new int[sections.Count];
        int pos = PolicyFormat.HeaderSize + sections.Count * PolicyFormat.SectionEntrySize;
        for (int i = 0; i < sections.Count; i++)
        {
            pos = Align8(pos);
            offsets[i] = pos;
            pos += sections[i].Length;
        }
        var blob = new byte[Align8(pos)];
        var span = blob.AsSpan();
        BinaryPrimitives.WriteUInt32LittleEndian(span[0..], PolicyFormat.Magic);
        BinaryPrimitives.WriteUInt16LittleEndian(span[4..], PolicyFormat.Version);
        BinaryPrimitives.WriteUInt16LittleEndian(span[6..], PolicyFormat.HeaderSize);
        BinaryPrimitives.WriteUInt32LittleEndian(span[8..], (uint)blob.Length);
        BinaryPrimitives.WriteUInt16LittleEndian(span[12..], (ushort)sections.Count);
        BinaryPrimitives.WriteUInt64LittleEndian(span[16..], policy.Serial);
        for (int i = 0; i < sections.Count; i++)
        {
            var e = span[(PolicyFormat.HeaderSize + i * PolicyFormat.SectionEntrySize)..];
            BinaryPrimitives.WriteUInt16LittleEndian(e, sections[i].Type);
            BinaryPrimitives.WriteUInt32LittleEndian(e[4..], (uint)offsets[i]);
            BinaryPrimitives.WriteUInt32LittleEndian(e[8..], (uint)sections[i].Length);
            BinaryPrimitives.WriteUInt32LittleEndian(e[12..], sections[i].Count);
        }
        for (int i = 0; i < sections.Count; i++)
        {
            var s = span[offsets[i]..];
            switch (sections[i].Type)
            {
                case PolicyFormat.SectSettings:
                    WriteSettings(s, policy);
                    break;
                case PolicyFormat.SectStrings:
                    strings.ToArray().CopyTo(s);
                    break;
                case PolicyFormat.SectIdentities:
                    for (int k = 0; k < identities.Count; k++)
                    {
                        WriteIdentity(s[(k * PolicyFormat.IdentitySize)..], identities[k], nameRefs[k]);
                    }
                    break;
                case PolicyFormat.SectRules:
                    for (int k = 0; k < rules.Count; k++)
                    {
                        WriteRule(s[(k * PolicyFormat.RuleSize)..], rules[k]);
                    }
                    break;
                case PolicyFormat.SectClasses:
                    for (int k = 0; k < classList.Count; k++)
                    {
                        WriteClass(s[(k * PolicyFormat.ClassSize)..], classList[k]);
                    }
                    break;
                case PolicyFormat.SectSyn:
                    WriteSyn(s, policy.SynLimits!);
                    break;
                case PolicyFormat.SectLevels:
                    for (int k = 0; k < policy.Hierarchy.Count; k++)
                    {
                        WriteLevel(s[(k * PolicyFormat.LevelSize)..], k, policy.Hierarchy[k], classes);
                    }
                    break;
            }
        }
        BinaryPrimitives.WriteUInt32LittleEndian(span[24..], Crc32.Compute(blob));
        return blob;
    }

    private static void WriteSettings(Span<byte> s, EndpointPolicy p)
    {
        s[0] = p.Mode switch
        {
            "enforce" => 0,
            "audit" => 1,
            _ => throw new PolicyException("mode must be enforce or audit"),
        };
        s[1] = p.Pending.OnTimeout switch
        {
            "block" => 0,
            "allow" => 1,
            _ => throw new PolicyException("pending.onTimeout must be block or allow"),
        };
        s[2] = p.Loopback switch
        {
            "allow" => 0,
            "enforce" => 1,
            _ => throw new PolicyException("loopback must be allow or enforce"),
        };
        s[3] = p.Dns switch
        {
            "rules" => 0,
            "allow-client-service" => 1,
            _ => throw new PolicyException("dns must be rules or allow-client-service"),
        };
        s[4] = p.UnknownImage switch
        {
            "block" => 0,
            "pend-for-hash" => 1,
            _ => throw new PolicyException("unknownImage must be block or pend-for-hash"),
        };
        if (p.Pending.MaxPended is < 1 or > 4096 || p.Pending.TimeoutMs is < 1 or > 60000)
        {
            throw new PolicyException("pending.maxPended must be 1..4096 and pending.timeoutMs 1..60000");
        }
        BinaryPrimitives.WriteUInt32LittleEndian(s[8..], (uint)p.Pending.MaxPended);
        BinaryPrimitives.WriteUInt32LittleEndian(s[12..], (uint)p.Pending.TimeoutMs);
        BinaryPrimitives.WriteUInt16LittleEndian(s[16..], (ushort)p.InitialLevel);
    }

    private static void WriteIdentity(Span<byte> r, CompiledIdentity id, (uint NameOff, uint NameLen, uint UserOff, uint UserLen) refs)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(r, id.Id);
        r[4] = id.Kind;
        r[5] = id.Flags;
        BinaryPrimitives.WriteUInt16LittleEndian(r[6..], id.ClassId);
        BinaryPrimitives.WriteUInt32LittleEndian(r[8..], refs.NameOff);
        BinaryPrimitives.WriteUInt32LittleEndian(r[12..], refs.NameLen);
        BinaryPrimitives.WriteUInt32LittleEndian(r[16..], refs.UserOff);
        BinaryPrimitives.WriteUInt32LittleEndian(r[20..], refs.UserLen);
        id.Sha256.CopyTo(r[24..]);
        BinaryPrimitives.WriteUInt32LittleEndian(r[56..], id.ConnRate);
        BinaryPrimitives.WriteUInt32LittleEndian(r[60..], id.ConnBurst);
    }

    private static void WriteRule(Span<byte> r, CompiledRule rule)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(r, rule.Id);
        BinaryPrimitives.WriteUInt32LittleEndian(r[4..], rule.Identity);
        r[8] = rule.Family;
        r[9] = rule.Prefix;
        r[10] = rule.Protocol;
        r[11] = rule.Direction;
        BinaryPrimitives.WriteUInt16LittleEndian(r[12..], rule.PortLo);
        BinaryPrimitives.WriteUInt16LittleEndian(r[14..], rule.PortHi);
        rule.Address.CopyTo(r[16..]);
        BinaryPrimitives.WriteUInt16LittleEndian(r[32..], rule.ClassId);
    }

    private static void WriteClass(Span<byte> r, TrafficClass c)
    {
        BinaryPrimitives.WriteUInt16LittleEndian(r, (ushort)c.Id);
        BinaryPrimitives.WriteUInt32LittleEndian(r[4..], c.Weight);
        BinaryPrimitives.WriteUInt32LittleEndian(r[8..], c.PacketsPerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[12..], c.PacketBurst);
        BinaryPrimitives.WriteUInt32LittleEndian(r[16..], c.BytesPerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[20..], c.ByteBurst);
        BinaryPrimitives.WriteUInt32LittleEndian(r[24..], c.ConnectionsPerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[28..], c.ConnectionBurst);
    }

    private static void WriteSyn(Span<byte> r, SynLimits s)
    {
        if (s.PerSourcePerSecond == 0 || s.PerSourceBurst == 0)
        {
            throw new PolicyException("synLimits: per-source rate and burst must be positive");
        }
        CheckRate(s.UnprovenPerSecond, s.UnprovenBurst, "synLimits unproven");
        if (s.TableSlots < 64 || s.TableSlots > (1u << 20) || (s.TableSlots & (s.TableSlots - 1)) != 0)
        {
            throw new PolicyException("synLimits.tableSlots must be a power of two in 64..1048576");
        }
        if (s.Ipv4Prefix is < 8 or > 32 || s.Ipv6Prefix is < 32 or > 128)
        {
            throw new PolicyException("synLimits prefixes: IPv4 8..32, IPv6 32..128");
        }
        BinaryPrimitives.WriteUInt32LittleEndian(r, s.PerSourcePerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[4..], s.PerSourceBurst);
        BinaryPrimitives.WriteUInt32LittleEndian(r[8..], s.UnprovenPerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[12..], s.UnprovenBurst);
        BinaryPrimitives.WriteUInt32LittleEndian(r[16..], s.TableSlots);
        r[20] = (byte)s.Ipv4Prefix;
        r[21] = (byte)s.Ipv6Prefix;
    }

    private static void WriteLevel(Span<byte> r, int index, HierarchyLevel level,
        Dictionary<string, (int Index, TrafficClass Class)> classes)
    {
        ulong mask = 0;
        foreach (string name in level.Admit)
        {
            if (!classes.TryGetValue(name, out var c))
            {
                throw new PolicyException($"hierarchy level {index}: unknown class '{name}'");
            }
            mask |= 1ul << c.Index;
        }
        BinaryPrimitives.WriteUInt16LittleEndian(r, (ushort)index);
        BinaryPrimitives.WriteUInt32LittleEndian(r[4..], level.PacketsPerSecond);
        BinaryPrimitives.WriteUInt32LittleEndian(r[8..], level.ConnectionsPerSecond);
        BinaryPrimitives.WriteUInt64LittleEndian(r[16..], mask);
    }
}
