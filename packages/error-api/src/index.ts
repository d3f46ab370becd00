/** The error-description service. */
export {};
