namespace SieveQ.Firewall.Policy;

/// <summary>Wire layout of policy blob version 1; mirrors driver/core/policy_format.h.</summary>
internal static class PolicyFormat
{
    public const uint Magic = 0x57465153;
    public const ushort Version = 1;
    public const int HeaderSize = 32;
    public const int SectionEntrySize = 16;

    public const ushort SectSettings = 1, SectStrings = 2, SectIdentities = 3, SectRules = 4, SectClasses = 5, SectSyn = 6, SectLevels = 7;

    public const int SettingsSize = 32, IdentitySize = 72, RuleSize = 40, ClassSize = 40, SynSize = 32, LevelSize = 24;

    public const byte KindImagePath = 1, KindImageHash = 2, KindService = 3;
    public const byte FlagRequireHash = 1, FlagMatchUser = 2;
    public const byte DirOut = 1, DirIn = 2, DirBoth = 3;
    public const ushort ClassInherit = 0xFFFF;

    public const int MaxClasses = 64, MaxLevels = 16, MaxName = 1024, MaxUser = 184;
}
