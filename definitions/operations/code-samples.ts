import { stageName } from '../stage-name';

/**
 * What every operation's code samples start from. The samples call the local
 * server (`npm start`), so they run as they are. The client samples are plain
 * JavaScript (valid TypeScript too); the reference page lists them under the
 * languages of openapi/redocly.yaml.
 */
export const LOCAL_SERVER_URL = `http://localhost:3000/${stageName}`;
export const CURL_AUTHORIZATION = `-H "Authorization: Bearer $PET_STORE_API_KEY"`;
export const CLIENT_SETUP = `import { PetStoreClient, PetStoreError } from '@petstore/client';

const petStore = new PetStoreClient({ baseUrl: '${LOCAL_SERVER_URL}', apiKey: process.env.PET_STORE_API_KEY ?? '' });`;
