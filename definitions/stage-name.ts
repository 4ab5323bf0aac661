/** The stage name: every URL of the API ends in /v1. */
export const stageName = 'v1';
