/* kubeadm's ClusterConfiguration as the kubeadm-config ConfigMap holds it:
 * the fields a join reads, and every field the cluster could make hostile
 * (it goes into files and certificates) checked as kubeadm checks it. */
#include <stdio.h>
#include <string.h>

#include <kjoin/private/cluster.h>

#include "testutil.h"

#define HEAD "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"

static void test_the_fields_a_join_reads(void **state)
{
    (void)state;
    static const char yaml[] = HEAD "kubernetesVersion: v1.37.2\nclusterName: prod\n"
                                    "controlPlaneEndpoint: \"[2001:db8::10]:8443\"\n"
                                    "networking: {serviceSubnet: 10.100.0.0/16, dnsDomain: example.internal}\n"
                                    "apiServer: {certSANs: [lb.example.com, 192.0.2.10]}\n"
                                    "etcd: {local: {dataDir: /srv/etcd, serverCertSANs: [etcd.example.com]}}\n"
                                    "certificatesDir: /srv/pki\nencryptionAlgorithm: ECDSA-P256\n";
    kjoin_cluster_configuration c;
    kjoin_err err;
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
    assert_string_equal(c.version, "v1.37.2");
    assert_int_equal(c.minor, 37);
    assert_int_equal(c.patch, 2);
    assert_string_equal(c.cluster_name, "prod");
    assert_string_equal(c.control_plane_host, "2001:db8::10");
    assert_int_equal(c.control_plane_port, 8443);
    assert_string_equal(c.service_subnet, "10.100.0.0/16");
    assert_string_equal(c.dns_domain, "example.internal");
    assert_int_equal(c.apiserver_sans.n, 2);
    assert_string_equal(c.apiserver_sans.name[0], "lb.example.com");
    assert_string_equal(c.apiserver_sans.name[1], "192.0.2.10");
    assert_int_equal(c.etcd_server_sans.n, 1);
    assert_string_equal(c.etcd_data_dir, "/srv/etcd");
    assert_string_equal(c.certificates_dir, "/srv/pki");
    assert_string_equal(c.encryption_algorithm, "ECDSA-P256");
    assert_false(c.external_etcd);
    /* a bare configuration: what is absent says so */
    static const char bare[] = HEAD;
    assert_int_equal(kjoin_cluster_configuration_parse(bare, strlen(bare), &c, &err), KJOIN_OK);
    assert_int_equal(c.minor, 0);
    assert_int_equal(c.patch, -1);
    assert_string_equal(c.version, "");
    assert_int_equal(c.control_plane_port, 0);
}

static void test_hostile_fields_are_refused(void **state)
{
    (void)state;
    static const char *const refused[] = {
        HEAD "certificatesDir: relative/pki\n",
        HEAD "certificatesDir: /etc/kubernetes/../../root\n",
        HEAD "clusterName: \"pro\\\"d\"\n",
        HEAD "controlPlaneEndpoint: lb.example.com:99999\n",
        HEAD "encryptionAlgorithm: DSA-1024\n",
        HEAD "etcd: {local: {dataDir: ../etcd}}\n",
        HEAD "etcd: {external: {endpoints: [\"https://192.0.2.9:2379\"], caFile: /a, certFile: /b}}\n",
        HEAD "kubernetesVersion: [v1.37.2]\n",
        HEAD "networking: {dnsDomain: \"example internal\"}\n",
        HEAD "apiServer: {certSANs: {a: b}}\n",
        HEAD "certificatesDir: /srv/pki\ncertificatesDir: /etc/kubernetes/pki\n",
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: [ClusterConfiguration\n",
    };
    kjoin_cluster_configuration c;
    kjoin_err err;
    for (size_t i = 0; i < TU_LEN(refused); i++)
        if (kjoin_cluster_configuration_parse(refused[i], strlen(refused[i]), &c, &err) == KJOIN_OK)
            fail_msg("accepted: %s", refused[i]);
}

static void test_dns1123_subdomains(void **state)
{
    (void)state;
    assert_true(kjoin_dns1123_subdomain("lb.example.com", false));
    assert_true(kjoin_dns1123_subdomain("a", false));
    assert_true(kjoin_dns1123_subdomain("*.example.com", true));
    assert_false(kjoin_dns1123_subdomain("*.example.com", false));
    assert_false(kjoin_dns1123_subdomain("", false));
    assert_false(kjoin_dns1123_subdomain("Upper.example.com", false));
    assert_false(kjoin_dns1123_subdomain("-lead.example.com", false));
    assert_false(kjoin_dns1123_subdomain("trail-.example.com", false));
    assert_false(kjoin_dns1123_subdomain("a..b", false));
    assert_false(kjoin_dns1123_subdomain("under_score.example.com", false));
    char long_name[300];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_false(kjoin_dns1123_subdomain(long_name, false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_fields_a_join_reads),
        cmocka_unit_test(test_hostile_fields_are_refused),
        cmocka_unit_test(test_dns1123_subdomains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
