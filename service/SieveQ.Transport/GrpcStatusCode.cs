namespace SieveQ.Transport;

/// <summary>The gRPC status codes this transport uses, with their wire values.</summary>
public enum GrpcStatusCode
{
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    Unauthenticated = 16,
}

/// <summary>A call ended with a non-OK status, on either side.</summary>
public sealed class GrpcCallException : Exception
{
    public GrpcCallException() : this(GrpcStatusCode.Unknown, "unknown") { }
    public GrpcCallException(string message) : this(GrpcStatusCode.Unknown, message) { }
    public GrpcCallException(string message, Exception inner) : base(message, inner) => Status = GrpcStatusCode.Unknown;

    public GrpcCallException(GrpcStatusCode status, string message) : base($"{status}: {message}") => Status = status;

    public GrpcStatusCode Status { get; }
}
