namespace SieveQ.Rules.Schema;

/// <summary>One way an instance breaks a schema: where (JSON Pointer), which keyword, and why.</summary>
public readonly record struct SchemaError(string InstancePath, string Keyword, string Message);
