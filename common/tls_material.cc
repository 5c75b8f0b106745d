#include "common/tls_material.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>

namespace reshard {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(absl::string_view pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Cert FirstCertificate(absl::string_view pem) {
  Bio bio = MemoryBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();  // a failed parse leaves errors gRPC would report later
  return cert;
}

}  // namespace

absl::StatusOr<int64_t> CertificateNotAfter(absl::string_view pem) {
  Cert cert = FirstCertificate(pem);
  if (cert == nullptr)
    return absl::InvalidArgumentError("holds no certificate");
  std::tm end{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &end) != 1) {
    return absl::InvalidArgumentError(
        "its certificate has an unreadable end of validity");
  }
  return static_cast<int64_t>(timegm(&end));
}

int CountCertificates(absl::string_view pem) {
  Bio bio = MemoryBio(pem);
  int count = 0;
  while (Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr))) {
    ++count;
  }
  ERR_clear_error();
  return count;
}

absl::Status CheckKeyOfCertificate(absl::string_view cert_pem,
                                   absl::string_view key_pem) {
  Cert cert = FirstCertificate(cert_pem);
  if (cert == nullptr)
    return absl::InvalidArgumentError("holds no certificate");
  Bio bio = MemoryBio(key_pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (key == nullptr) return absl::InvalidArgumentError("holds no private key");
  const int matches = X509_check_private_key(cert.get(), key.get());
  ERR_clear_error();
  if (matches != 1) {
    return absl::InvalidArgumentError(
        "is not the private key of --tls_cert's certificate");
  }
  return absl::OkStatus();
}

}  // namespace reshard
