using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>A message on its way out of a Byzantine replica: an object, or bytes it mangled; possibly held back.</summary>
internal readonly record struct Outgoing(int To, BftMessage? Message, byte[]? Frame, long ExtraDelay = 0);
