// Real Java libraries and versions the synthetic fleet carries, vulnerable releases included on purpose.

export interface Library {
  groupId: string;
  artifactId: string;
  versions: readonly string[];
  /** A class the application loads from it, so the component shows as USED. */
  className: string;
}

export const LIBRARIES: readonly Library[] = [
  { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-core', versions: ['2.14.1', '2.15.0', '2.16.0', '2.17.0', '2.17.1', '2.20.0', '2.23.1'], className: 'org/apache/logging/log4j/core/Logger' },
  { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-api', versions: ['2.14.1', '2.17.1', '2.20.0', '2.23.1'], className: 'org/apache/logging/log4j/LogManager' },
  { groupId: 'org.springframework', artifactId: 'spring-core', versions: ['4.3.30.RELEASE', '5.2.22.RELEASE', '5.3.17', '5.3.18', '5.3.31', '6.1.5'], className: 'org/springframework/core/SpringVersion' },
  { groupId: 'org.springframework', artifactId: 'spring-beans', versions: ['5.2.19.RELEASE', '5.3.17', '5.3.18', '5.3.31', '6.1.5'], className: 'org/springframework/beans/BeanWrapperImpl' },
  { groupId: 'org.springframework', artifactId: 'spring-webmvc', versions: ['5.3.17', '5.3.18', '5.3.31', '6.1.5'], className: 'org/springframework/web/servlet/DispatcherServlet' },
  { groupId: 'org.springframework', artifactId: 'spring-context', versions: ['5.3.17', '5.3.31', '6.1.5'], className: 'org/springframework/context/support/AbstractApplicationContext' },
  { groupId: 'com.fasterxml.jackson.core', artifactId: 'jackson-databind', versions: ['2.9.10.4', '2.10.5', '2.12.6', '2.13.4.2', '2.15.3', '2.17.0'], className: 'com/fasterxml/jackson/databind/ObjectMapper' },
  { groupId: 'com.fasterxml.jackson.core', artifactId: 'jackson-core', versions: ['2.12.6', '2.13.4', '2.15.3', '2.17.0'], className: 'com/fasterxml/jackson/core/JsonFactory' },
  { groupId: 'org.yaml', artifactId: 'snakeyaml', versions: ['1.26', '1.30', '1.33', '2.0', '2.2'], className: 'org/yaml/snakeyaml/Yaml' },
  { groupId: 'org.apache.commons', artifactId: 'commons-text', versions: ['1.8', '1.9', '1.10.0', '1.11.0'], className: 'org/apache/commons/text/StringSubstitutor' },
  { groupId: 'commons-collections', artifactId: 'commons-collections', versions: ['3.2.1', '3.2.2'], className: 'org/apache/commons/collections/map/LazyMap' },
  { groupId: 'org.apache.commons', artifactId: 'commons-lang3', versions: ['3.9', '3.12.0', '3.14.0'], className: 'org/apache/commons/lang3/StringUtils' },
  { groupId: 'commons-io', artifactId: 'commons-io', versions: ['2.6', '2.11.0', '2.15.1'], className: 'org/apache/commons/io/IOUtils' },
  { groupId: 'org.apache.struts', artifactId: 'struts2-core', versions: ['2.3.31', '2.5.10', '2.5.33', '6.3.0.2'], className: 'org/apache/struts2/dispatcher/Dispatcher' },
  { groupId: 'com.google.guava', artifactId: 'guava', versions: ['28.2-jre', '31.1-jre', '32.1.3-jre', '33.0.0-jre'], className: 'com/google/common/collect/ImmutableList' },
  { groupId: 'io.netty', artifactId: 'netty-codec-http', versions: ['4.1.68.Final', '4.1.86.Final', '4.1.100.Final', '4.1.108.Final'], className: 'io/netty/handler/codec/http/HttpObjectDecoder' },
  { groupId: 'org.apache.tomcat.embed', artifactId: 'tomcat-embed-core', versions: ['9.0.58', '9.0.83', '10.1.18', '10.1.20'], className: 'org/apache/catalina/core/StandardContext' },
  { groupId: 'ch.qos.logback', artifactId: 'logback-classic', versions: ['1.2.3', '1.2.13', '1.4.14', '1.5.3'], className: 'ch/qos/logback/classic/Logger' },
  { groupId: 'org.slf4j', artifactId: 'slf4j-api', versions: ['1.7.30', '1.7.36', '2.0.12'], className: 'org/slf4j/LoggerFactory' },
  { groupId: 'com.h2database', artifactId: 'h2', versions: ['1.4.200', '2.1.214', '2.2.224'], className: 'org/h2/Driver' },
  { groupId: 'org.postgresql', artifactId: 'postgresql', versions: ['42.2.18', '42.5.1', '42.7.2'], className: 'org/postgresql/Driver' },
  { groupId: 'com.google.protobuf', artifactId: 'protobuf-java', versions: ['3.16.1', '3.21.7', '3.25.3'], className: 'com/google/protobuf/CodedInputStream' },
  { groupId: 'org.apache.httpcomponents', artifactId: 'httpclient', versions: ['4.5.10', '4.5.13', '4.5.14'], className: 'org/apache/http/impl/client/HttpClients' },
  { groupId: 'org.bouncycastle', artifactId: 'bcprov-jdk15on', versions: ['1.60', '1.68', '1.70'], className: 'org/bouncycastle/jce/provider/BouncyCastleProvider' },
  { groupId: 'org.hibernate', artifactId: 'hibernate-core', versions: ['5.4.32.Final', '5.6.15.Final', '6.4.4.Final'], className: 'org/hibernate/internal/SessionImpl' },
  { groupId: 'io.micrometer', artifactId: 'micrometer-core', versions: ['1.9.17', '1.12.4'], className: 'io/micrometer/core/instrument/Metrics' },
  { groupId: 'com.squareup.okhttp3', artifactId: 'okhttp', versions: ['3.14.9', '4.9.3', '4.12.0'], className: 'okhttp3/OkHttpClient' },
  { groupId: 'org.eclipse.jetty', artifactId: 'jetty-server', versions: ['9.4.43.v20210629', '9.4.54.v20240208', '11.0.20'], className: 'org/eclipse/jetty/server/Server' },
  { groupId: 'io.undertow', artifactId: 'undertow-core', versions: ['2.2.24.Final', '2.3.12.Final'], className: 'io/undertow/Undertow' },
  { groupId: 'org.xerial.snappy', artifactId: 'snappy-java', versions: ['1.1.8.4', '1.1.10.5'], className: 'org/xerial/snappy/Snappy' },
];

export const APP_ENVS = ['checkout', 'payments', 'search', 'inventory', 'catalog', 'shipping', 'accounts', 'pricing', 'reviews', 'recommendations', 'fraud', 'notifications'];
export const ENVIRONMENTS: readonly (readonly [string, number])[] = [['prod', 6], ['staging', 3], ['dev', 2]];
export const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-south-1'];
export const TEAMS = ['core', 'growth', 'platform', 'data', 'edge', 'billing'];
export const JAVA_RUNTIMES: readonly (readonly [{ version: string; runtime: string; vendor: string }, number])[] = [
  [{ version: '17.0.10', runtime: '17.0.10+7-LTS', vendor: 'Azul Systems, Inc.' }, 5],
  [{ version: '21.0.2', runtime: '21.0.2+13-LTS', vendor: 'Eclipse Adoptium' }, 3],
  [{ version: '11.0.22', runtime: '11.0.22+7-LTS', vendor: 'Azul Systems, Inc.' }, 2],
  [{ version: '1.8.0_402', runtime: '1.8.0_402-b06', vendor: 'Oracle Corporation' }, 1],
  [{ version: '17.0.9', runtime: '17.0.9+8-LTS', vendor: 'Amazon.com Inc.' }, 1],
];
