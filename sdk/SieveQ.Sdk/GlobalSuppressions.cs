using System.Diagnostics.CodeAnalysis;

// The two CommitAsync overloads both end in an optional CancellationToken: they shipped before the API baseline,
// and merging them would break every caller. New overloads follow RS0026.
[assembly: SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = "Shipped before the API baseline", Scope = "member", Target = "~M:SieveQ.Sdk.Receiver.SieveQReceiver.CommitAsync(System.Threading.CancellationToken)~System.Threading.Tasks.ValueTask")]
[assembly: SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = "Shipped before the API baseline", Scope = "member", Target = "~M:SieveQ.Sdk.Receiver.SieveQReceiver.CommitAsync(System.Collections.Generic.IReadOnlyList{SieveQ.Sieve.Envelope.DeliveredCursor},System.Threading.CancellationToken)~System.Threading.Tasks.ValueTask")]
