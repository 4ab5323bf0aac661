/** The time source, injectable so tests can stand on both sides of any instant. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
