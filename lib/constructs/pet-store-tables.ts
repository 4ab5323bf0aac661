import { Validations } from 'aws-cdk-lib';
import { type Attribute, AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { type KeyAttribute, type TableDefinition, type TableName, tables } from '../../definitions/tables';
import { type DataProtection, tablesWorthRestoring } from '../stage-config';

function attribute(key: KeyAttribute): Attribute {
  return { name: key.name, type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER };
}

export interface PetStoreTablesProps {
  dataProtection: DataProtection;
}

/**
 * Every table of definitions/tables.ts, built from that table (keys, indexes,
 * TTL) so that the cloud and DynamoDB Local never disagree. On-demand capacity,
 * AWS-managed encryption at rest, and the stage's data protection.
 */
export class PetStoreTables extends Construct {
  readonly tables: Record<TableName, Table>;

  constructor(scope: Construct, id: string, props: PetStoreTablesProps) {
    super(scope, id);
    const { removalPolicy, pointInTimeRecovery, deletionProtection } = props.dataProtection;
    const created: Partial<Record<TableName, Table>> = {};
    for (const name of Object.keys(tables) as TableName[]) {
      const definition: TableDefinition = tables[name];
      const backedUp = pointInTimeRecovery && tablesWorthRestoring.includes(name);
      const table = new Table(this, name, {
        partitionKey: attribute(definition.partitionKey),
        sortKey: definition.sortKey ? attribute(definition.sortKey) : undefined,
        billingMode: BillingMode.PAY_PER_REQUEST,
        encryption: TableEncryption.AWS_MANAGED,
        timeToLiveAttribute: definition.timeToLiveAttribute,
        pointInTimeRecoverySpecification: backedUp ? { pointInTimeRecoveryEnabled: true } : undefined,
        deletionProtection,
        removalPolicy,
      });
      for (const index of definition.indexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
          projectionType: ProjectionType.ALL,
        });
      }
      if (!backedUp) {
        Validations.of(table).acknowledge({
          id: 'AwsSolutions-DDB3',
          reason: pointInTimeRecovery
            ? `The ${name} table holds short-lived records that expire by TTL; restoring them would bring back stale data (tablesWorthRestoring, lib/stage-config.ts).`
            : 'Disposable stage (lib/stage-config.ts): its data may be lost; production has point-in-time recovery.',
        });
      }
      created[name] = table;
    }
    this.tables = created as Record<TableName, Table>;
  }
}
